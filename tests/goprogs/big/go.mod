module goblueprint.test/big

go 1.22
