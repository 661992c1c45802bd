"""Reading Go execution traces (Go 1.22-1.27 wire format), as Go's internal/trace does."""
