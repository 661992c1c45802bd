module example.local/mainpkg

go 1.21
