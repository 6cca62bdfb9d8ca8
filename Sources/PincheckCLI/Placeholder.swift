public enum PincheckCommand { public static func main() {} }
