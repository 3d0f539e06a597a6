package segment

// noFollow is nothing on Windows, where creating a symbolic link takes a
// privilege the recorded agent does not have by default.
const noFollow = 0

func isLinkRefused(error) bool { return false }
