module goblueprint.local/gohelper

go 1.22
