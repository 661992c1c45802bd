package runtime

// Syntax of recent releases the helper must parse and type-check.

type box struct{ v int }

// A generic method (Go 1.27).
func (b *box) get[T any](x T) T { return x }

// new of an expression (Go 1.26).
func useNew() *int { return new(41 + 1) }

func callGeneric(b *box) int { return b.get[int](1) + *useNew() }
