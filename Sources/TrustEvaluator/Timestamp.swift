import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Dates as text without Foundation's formatters: they load time-zone data and cost microseconds
/// per call, which the evaluation path and a short-lived command cannot afford.
enum Timestamp {
    /// RFC 3339 / ISO 8601 in UTC with whole seconds, such as `2030-06-01T00:00:00Z`: the format
    /// of `ISO8601DateFormatter`'s defaults.
    static func iso8601(_ date: Date) -> String {
        let parts = utc(date)
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))T\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2))Z"
    }

    /// The calendar day in UTC, such as `2030-06-01`.
    static func day(_ date: Date) -> String {
        let parts = utc(date)
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))"
    }

    private static func utc(_ date: Date) -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        var seconds = time_t(max(-62_135_596_800, min(253_402_300_799, date.timeIntervalSince1970.rounded(.down))))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return (Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
