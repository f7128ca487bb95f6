package zuc

// coreHook, when non-nil, is called on entry to the portable core: every
// State or multiState initialisation and every keystream call of a State. Only tests
// set it (TestLaneTiersNeverRunPortableCore proves with it that no batch
// primitive falls back to the portable core while a lane tier is
// selected); it is nil in production, where the check is one predictable
// branch per call, never per round.
var coreHook func()

// enterCore calls coreHook if it is set.
func enterCore() {
	if coreHook != nil {
		coreHook()
	}
}
