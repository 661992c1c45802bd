module goblueprint.test/cpusample

go 1.22
