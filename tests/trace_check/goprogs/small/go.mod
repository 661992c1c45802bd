module goblueprint.test/small

go 1.22
