import PincheckCLI

Pincheck.runAsMain()
