package chain_test

// Computed once, by the definition in the package doc.
const (
	goldenGenesis = "60d866d4605a504c768d6e7c1a9897cc1fefa407795ff6c777263147c2a770cf"
	goldenH2      = "8eb8bf1153f7b23b38878734318d93e3684a58d29b7c1aa0ac74f0ced5b756b0"
)
