module gcmix

go 1.22
