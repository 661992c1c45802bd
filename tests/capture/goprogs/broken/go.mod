module example.local/broken

go 1.22
