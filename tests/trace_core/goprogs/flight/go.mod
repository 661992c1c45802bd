module goblueprint.test/flight

go 1.25
