package lead

// The renew deadline the term lives by is the contract's 10 s, written here
// as a number so a change of the constant shows.
const renewDeadlineSeconds = 10
