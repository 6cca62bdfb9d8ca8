import PincheckCLI
PincheckCommand.main()
