module goblueprint.test/sched

go 1.22
