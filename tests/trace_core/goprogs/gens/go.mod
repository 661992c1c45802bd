module goblueprint.test/gens

go 1.22
