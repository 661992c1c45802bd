module example.local/testpkg

go 1.22
