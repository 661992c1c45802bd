module summaryedges

go 1.22
