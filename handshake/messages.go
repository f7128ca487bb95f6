package handshake

import (
	"encoding/binary"
)

// Message types (first byte of every gmtun datagram). 0x14 is the data
// packet, owned by package ciphers and the tunnel.
const (
	MessageInitiationType  = 0x11
	MessageResponseType    = 0x12
	MessageConfirmType     = 0x13
	MessageCookieReplyType = 0x15
)

// ProtocolVersion is byte 1 of every message.
const ProtocolVersion = 1

// Field sizes.
const (
	tsSize        = 12 // TAI64N
	offerSize     = 4  // MaxOffer suite IDs
	flagsSize     = 4
	payloadSize   = tsSize + offerSize + flagsSize // 20
	selectSize    = 8                              // suite, status, reserved[2], allowed[4]
	tagSize       = 16                             // SM4-GCM tag
	macSize       = 16
	staticIDSize  = 32
	confirmSize   = 32 // S_A, S_B
	cookieSize    = 16
	cookieNonceSz = 24
)

// MaxOffer is the number of suites an initiation can offer.
const MaxOffer = offerSize

// Initiation (0x11, initiator → responder) layout.
const (
	MessageInitiationSize            = 188
	MessageInitiationOffsetSender    = 4
	MessageInitiationOffsetEphemeral = 8
	MessageInitiationOffsetStatic    = 72  // enc_static: 32 + 16
	MessageInitiationOffsetPayload   = 120 // enc_payload: 20 + 16
	MessageInitiationOffsetMAC1      = 156
	MessageInitiationOffsetMAC2      = 172
)

// Response (0x12, responder → initiator) layout.
const (
	MessageResponseSize            = 164
	MessageResponseOffsetSender    = 4
	MessageResponseOffsetReceiver  = 8
	MessageResponseOffsetEphemeral = 12
	MessageResponseOffsetConfirm   = 76  // S_B
	MessageResponseOffsetSelect    = 108 // enc_select: 8 + 16
	MessageResponseOffsetMAC1      = 132
	MessageResponseOffsetMAC2      = 148
)

// Confirm (0x13, initiator → responder) layout. It has no mac2: it costs
// the responder no elliptic-curve work and only matches a pending
// handshake, so it is never subject to the cookie mechanism.
const (
	MessageConfirmSize           = 72
	MessageConfirmOffsetReceiver = 4
	MessageConfirmOffsetConfirm  = 8 // S_A
	MessageConfirmOffsetTag      = 40
	MessageConfirmOffsetMAC1     = 56
)

// Cookie reply (0x15) layout.
const (
	MessageCookieReplySize           = 64
	MessageCookieReplyOffsetReceiver = 4
	MessageCookieReplyOffsetNonce    = 8
	MessageCookieReplyOffsetCookie   = 32 // encrypted cookie: 16 + 16
)

// Point is a 64-byte x ‖ y public point as carried on the wire.
type Point = [PublicKeySize]byte

// Initiation is a parsed 0x11 message. Parsing checks layout only; no
// cryptographic validation happens here.
type Initiation struct {
	Sender     uint32
	Ephemeral  Point
	EncStatic  [staticIDSize + tagSize]byte
	EncPayload [payloadSize + tagSize]byte
	MAC1, MAC2 [macSize]byte
}

// Response is a parsed 0x12 message.
type Response struct {
	Sender, Receiver uint32
	Ephemeral        Point
	SB               [confirmSize]byte
	EncSelect        [selectSize + tagSize]byte
	MAC1, MAC2       [macSize]byte
}

// Confirm is a parsed 0x13 message.
type Confirm struct {
	Receiver uint32
	SA       [confirmSize]byte
	Tag      [tagSize]byte
	MAC1     [macSize]byte
}

// CookieReply is a parsed 0x15 message.
type CookieReply struct {
	Receiver        uint32
	Nonce           [cookieNonceSz]byte
	EncryptedCookie [cookieSize + tagSize]byte
}

// checkHeader validates length, type, version and reserved bytes.
func checkHeader(b []byte, typ byte, size int) error {
	if len(b) != size {
		return ErrMessageLength
	}
	if b[0] != typ || b[1] != ProtocolVersion || b[2] != 0 || b[3] != 0 {
		return ErrMessageHeader
	}
	return nil
}

func putHeader(b []byte, typ byte) {
	b[0], b[1], b[2], b[3] = typ, ProtocolVersion, 0, 0
}

// Unmarshal parses b into m. It fails with ErrMessageLength unless
// len(b) == MessageInitiationSize and with ErrMessageHeader on a wrong
// type, version or reserved field. It does not allocate.
func (m *Initiation) Unmarshal(b []byte) error {
	if err := checkHeader(b, MessageInitiationType, MessageInitiationSize); err != nil {
		return err
	}
	m.Sender = binary.LittleEndian.Uint32(b[MessageInitiationOffsetSender:])
	copy(m.Ephemeral[:], b[MessageInitiationOffsetEphemeral:])
	copy(m.EncStatic[:], b[MessageInitiationOffsetStatic:])
	copy(m.EncPayload[:], b[MessageInitiationOffsetPayload:])
	copy(m.MAC1[:], b[MessageInitiationOffsetMAC1:])
	copy(m.MAC2[:], b[MessageInitiationOffsetMAC2:])
	return nil
}

// Marshal writes m into b.
func (m *Initiation) Marshal(b *[MessageInitiationSize]byte) {
	putHeader(b[:], MessageInitiationType)
	binary.LittleEndian.PutUint32(b[MessageInitiationOffsetSender:], m.Sender)
	copy(b[MessageInitiationOffsetEphemeral:], m.Ephemeral[:])
	copy(b[MessageInitiationOffsetStatic:], m.EncStatic[:])
	copy(b[MessageInitiationOffsetPayload:], m.EncPayload[:])
	copy(b[MessageInitiationOffsetMAC1:], m.MAC1[:])
	copy(b[MessageInitiationOffsetMAC2:], m.MAC2[:])
}

// Unmarshal parses b into m; see Initiation.Unmarshal for the checks.
func (m *Response) Unmarshal(b []byte) error {
	if err := checkHeader(b, MessageResponseType, MessageResponseSize); err != nil {
		return err
	}
	m.Sender = binary.LittleEndian.Uint32(b[MessageResponseOffsetSender:])
	m.Receiver = binary.LittleEndian.Uint32(b[MessageResponseOffsetReceiver:])
	copy(m.Ephemeral[:], b[MessageResponseOffsetEphemeral:])
	copy(m.SB[:], b[MessageResponseOffsetConfirm:])
	copy(m.EncSelect[:], b[MessageResponseOffsetSelect:])
	copy(m.MAC1[:], b[MessageResponseOffsetMAC1:])
	copy(m.MAC2[:], b[MessageResponseOffsetMAC2:])
	return nil
}

// Marshal writes m into b.
func (m *Response) Marshal(b *[MessageResponseSize]byte) {
	putHeader(b[:], MessageResponseType)
	binary.LittleEndian.PutUint32(b[MessageResponseOffsetSender:], m.Sender)
	binary.LittleEndian.PutUint32(b[MessageResponseOffsetReceiver:], m.Receiver)
	copy(b[MessageResponseOffsetEphemeral:], m.Ephemeral[:])
	copy(b[MessageResponseOffsetConfirm:], m.SB[:])
	copy(b[MessageResponseOffsetSelect:], m.EncSelect[:])
	copy(b[MessageResponseOffsetMAC1:], m.MAC1[:])
	copy(b[MessageResponseOffsetMAC2:], m.MAC2[:])
}

// Unmarshal parses b into m; see Initiation.Unmarshal for the checks.
func (m *Confirm) Unmarshal(b []byte) error {
	if err := checkHeader(b, MessageConfirmType, MessageConfirmSize); err != nil {
		return err
	}
	m.Receiver = binary.LittleEndian.Uint32(b[MessageConfirmOffsetReceiver:])
	copy(m.SA[:], b[MessageConfirmOffsetConfirm:])
	copy(m.Tag[:], b[MessageConfirmOffsetTag:])
	copy(m.MAC1[:], b[MessageConfirmOffsetMAC1:])
	return nil
}

// Marshal writes m into b.
func (m *Confirm) Marshal(b *[MessageConfirmSize]byte) {
	putHeader(b[:], MessageConfirmType)
	binary.LittleEndian.PutUint32(b[MessageConfirmOffsetReceiver:], m.Receiver)
	copy(b[MessageConfirmOffsetConfirm:], m.SA[:])
	copy(b[MessageConfirmOffsetTag:], m.Tag[:])
	copy(b[MessageConfirmOffsetMAC1:], m.MAC1[:])
}

// Unmarshal parses b into m; see Initiation.Unmarshal for the checks.
func (m *CookieReply) Unmarshal(b []byte) error {
	if err := checkHeader(b, MessageCookieReplyType, MessageCookieReplySize); err != nil {
		return err
	}
	m.Receiver = binary.LittleEndian.Uint32(b[MessageCookieReplyOffsetReceiver:])
	copy(m.Nonce[:], b[MessageCookieReplyOffsetNonce:])
	copy(m.EncryptedCookie[:], b[MessageCookieReplyOffsetCookie:])
	return nil
}

// Marshal writes m into b.
func (m *CookieReply) Marshal(b *[MessageCookieReplySize]byte) {
	putHeader(b[:], MessageCookieReplyType)
	binary.LittleEndian.PutUint32(b[MessageCookieReplyOffsetReceiver:], m.Receiver)
	copy(b[MessageCookieReplyOffsetNonce:], m.Nonce[:])
	copy(b[MessageCookieReplyOffsetCookie:], m.EncryptedCookie[:])
}

// macOffsets returns the mac1 and mac2 offsets of a handshake message
// whose length and header are valid (mac2 = 0 when the type has none).
func macOffsets(b []byte) (mac1, mac2 int, ok bool) {
	if len(b) < 4 || b[1] != ProtocolVersion || b[2] != 0 || b[3] != 0 {
		return 0, 0, false
	}
	switch {
	case b[0] == MessageInitiationType && len(b) == MessageInitiationSize:
		return MessageInitiationOffsetMAC1, MessageInitiationOffsetMAC2, true
	case b[0] == MessageResponseType && len(b) == MessageResponseSize:
		return MessageResponseOffsetMAC1, MessageResponseOffsetMAC2, true
	case b[0] == MessageConfirmType && len(b) == MessageConfirmSize:
		return MessageConfirmOffsetMAC1, 0, true
	}
	return 0, 0, false
}

// senderIndex returns the sender index of an initiation or response (the
// receiver index of a cookie reply to it).
func senderIndex(b []byte) uint32 {
	return binary.LittleEndian.Uint32(b[4:8])
}
