import FoundationEssentials

/// UTC dates as text and back, without Foundation's date formatters and calendars: those load
/// time-zone data and cost microseconds per call, which neither the evaluation path nor a
/// short-lived command can afford. The proleptic Gregorian calendar, years 0001–9999.
package enum Timestamp {
    /// RFC 3339 in UTC with whole seconds, such as `2030-06-01T00:00:00Z`: what
    /// `ISO8601DateFormatter` prints with its default options.
    public static func iso8601(_ date: Date) -> String {
        let (days, seconds) = split(date)
        let (year, month, day) = civil(fromDays: days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2))Z"
    }

    /// The calendar day in UTC, such as `2030-06-01`.
    public static func day(_ date: Date) -> String {
        let (year, month, day) = civil(fromDays: split(date).days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    /// Reads `yyyy-MM-dd` as 00:00:00 UTC of that day; nil unless it is a real calendar date.
    public static func parseDay(_ text: String) -> Date? {
        var reader = Reader(text)
        guard let days = reader.date(), reader.atEnd else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400))
    }

    /// Reads a day (`2030-06-01`, meaning its start in UTC) or an RFC 3339 date and time
    /// (`2030-06-01T12:00:00Z`, `2030-06-01T14:00:00+02:00`, fractional seconds allowed); nil for
    /// anything else, including impossible dates and times.
    public static func parse(_ text: String) -> Date? {
        var reader = Reader(text)
        guard let days = reader.date() else { return nil }
        if reader.atEnd { return Date(timeIntervalSince1970: TimeInterval(days * 86_400)) }
        guard reader.take("T") || reader.take("t"),
            let hour = reader.number(2), hour < 24, reader.take(":"),
            let minute = reader.number(2), minute < 60, reader.take(":"),
            let second = reader.number(2), second < 60
        else { return nil }
        var fraction = 0.0
        if reader.take(".") {
            var scale = 0.1
            var digits = 0
            while let digit = reader.number(1) {
                fraction += Double(digit) * scale
                scale /= 10
                digits += 1
            }
            guard digits > 0 else { return nil }
        }
        var offset = 0
        if reader.take("Z") || reader.take("z") {
            offset = 0
        } else {
            let sign: Int
            if reader.take("+") { sign = 1 } else if reader.take("-") { sign = -1 } else { return nil }
            guard let hours = reader.number(2), hours < 24, reader.take(":"), let minutes = reader.number(2), minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        guard reader.atEnd else { return nil }
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: TimeInterval(seconds) + fraction)
    }

    /// Whole seconds since 1970 (rounded down) for a verification time, clamped to years
    /// 0001–9999; NaN reads as the earliest, so certificates are "not yet valid" (fail closed).
    /// Never traps, whatever `Date` a caller passes.
    static func seconds(_ date: Date) -> Int64 {
        let value = date.timeIntervalSince1970
        guard !value.isNaN else { return -62_135_596_800 }
        return Int64(max(-62_135_596_800, min(253_402_300_799, value.rounded(.down))))
    }

    // MARK: Calendar arithmetic (H. Hinnant's days-from-civil algorithms)

    /// The day since 1970-01-01 that `date` falls on (UTC), for ``civil(fromDays:)``.
    static func wholeDays(_ date: Date) -> Int { split(date).days }

    private static func split(_ date: Date) -> (days: Int, seconds: Int) {
        // Clamped to 0001-01-01 … 9999-12-31T23:59:59Z, the range four-digit years can show.
        let total = Int(seconds(date))
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        return (days, total - days * 86_400)
    }

    static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// A cursor over ASCII bytes.
    private struct Reader {
        private let bytes: [UInt8]
        private var position = 0

        init(_ text: String) { bytes = Array(text.utf8) }

        var atEnd: Bool { position == bytes.count }

        mutating func take(_ character: Character) -> Bool {
            guard position < bytes.count, let ascii = character.asciiValue, bytes[position] == ascii else { return false }
            position += 1
            return true
        }

        /// Exactly `count` decimal digits.
        mutating func number(_ count: Int) -> Int? {
            guard position + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[position..<position + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            position += count
            return value
        }

        /// `yyyy-MM-dd` as days since 1970-01-01, if it is a real date.
        mutating func date() -> Int? {
            guard let year = number(4), year >= 1, take("-"), let month = number(2), (1...12).contains(month),
                take("-"), let day = number(2), day >= 1
            else { return nil }
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            let lengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            guard day <= lengths[month - 1] else { return nil }
            return Timestamp.days(fromCivil: year, month, day)
        }
    }
}
