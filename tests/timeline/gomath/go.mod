module gomath

go 1.21
