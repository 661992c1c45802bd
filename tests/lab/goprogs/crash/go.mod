module goblueprint.test/crash

go 1.22
