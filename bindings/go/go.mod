module libshpmu

go 1.19
