module example.com/cgohello

go 1.22
