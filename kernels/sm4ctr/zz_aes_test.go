package sm4ctr
import ("crypto/aes";"crypto/cipher";"testing")
func BenchmarkAESGCM1420(b *testing.B){ blk,_:=aes.NewCipher(make([]byte,16)); g,_:=cipher.NewGCM(blk); buf:=make([]byte,1420,1500); n:=make([]byte,12); b.SetBytes(1420); for b.Loop(){ g.Seal(buf[:0],n,buf,nil)} }
