// Package atomic is a stand-in with the signatures the synthetic runtime uses.
package atomic

func Store(ptr *uint32, val uint32) { *ptr = val }

func Load(ptr *uint32) uint32 { return *ptr }

func Cas(ptr *uint32, old, new uint32) bool {
	if *ptr == old {
		*ptr = new
		return true
	}
	return false
}

type Uint32 struct{ v uint32 }

func (u *Uint32) Load() uint32 { return u.v }

func (u *Uint32) Store(v uint32) { u.v = v }

func (u *Uint32) CompareAndSwap(old, new uint32) bool { return Cas(&u.v, old, new) }
