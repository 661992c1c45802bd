module goblueprint.test/gosort

go 1.22
