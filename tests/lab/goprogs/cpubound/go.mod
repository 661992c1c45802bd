module goblueprint.test/cpubound

go 1.22
