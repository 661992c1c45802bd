module goblueprint.test/coro

go 1.23
