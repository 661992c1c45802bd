module example.local/selftrace

go 1.22
