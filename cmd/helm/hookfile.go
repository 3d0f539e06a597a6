package main

// maxHomeFile bounds what helm reads of a small file of the home
// (config.toml, policy.toml): 4 MiB is far beyond any written by hand.
// Such files are opened with package regular, never blocking on what the
// recorded agent planted there (a FIFO, /dev/zero, a socket), which would
// hold a hook until the host's timeout lets the call go.
const maxHomeFile = 4 << 20
