module goblueprint.test/sleepy

go 1.22
