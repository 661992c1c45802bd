module spin

go 1.22
