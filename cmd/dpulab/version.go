package main

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version or VCS revision from the build info is
// shown (agentcmd.VersionString).
var version = ""
