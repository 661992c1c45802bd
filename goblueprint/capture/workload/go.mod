module goblueprint.local/workload

go 1.22
