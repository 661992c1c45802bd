module goblueprint.test/steal2

go 1.22
