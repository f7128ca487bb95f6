package config

// baseDoc is a valid configuration. Its line numbers matter to the error
// tests: 1 [interface], 2 name, 3 private_key_file, 4 listen_port,
// 5 address, 7 [[peer]], 8 name, 9 public_key, 10 endpoint, 11 allowed_ips.
const baseDoc = `[interface]
name = "gm0"
private_key_file = "KEYFILE"
listen_port = 51900
address = ["198.19.0.1/24"]

[[peer]]
name = "site-b"
public_key = "PUB1"
endpoint = "198.18.0.2:51900"
allowed_ips = ["198.19.0.2/32"]
`

// secondPeer is appended to baseDoc: lines 12 [[peer]], 13 name,
// 14 public_key, 15 endpoint, 16 allowed_ips.
const secondPeer = `[[peer]]
name = "site-c"
public_key = "PUB2"
endpoint = "198.18.0.3:51900"
allowed_ips = ["198.19.0.3/32"]
`
