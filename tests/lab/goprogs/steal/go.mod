module goblueprint.test/steal

go 1.22
