import PincheckCLI

Pincheck.runAsMain(Watch.self)
