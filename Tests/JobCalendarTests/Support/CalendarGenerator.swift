import TestSupport

/// Random systemd calendar expressions, mostly valid, some not: weekday
/// lists and ranges in any case, dates with lists, ranges, repetitions and
/// `~`, times with fractional seconds, shorthands.
struct CalendarGenerator {
    var random: SeededGenerator

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    static let shorthands = [
        "minutely", "hourly", "daily", "weekly", "monthly", "yearly", "annually", "quarterly",
        "semiannually", "semi-annually", "bi-annually", "Daily", "WEEKLY",
    ]
    static let weekdayNames = [
        ["Mon", "Monday"], ["Tue", "Tuesday"], ["Wed", "Wednesday"], ["Thu", "Thursday"],
        ["Fri", "Friday"], ["Sat", "Saturday"], ["Sun", "Sunday"],
    ]

    mutating func expression() -> String {
        if random.chance(4) { return random.pick(Self.shorthands) }
        var parts: [String] = []
        if random.chance(30) { parts.append(weekdays()) }
        if random.chance(65) { parts.append(date()) }
        if random.chance(85) || parts.isEmpty { parts.append(time()) }
        return parts.joined(separator: " ")
    }

    mutating func weekdayName(_ number: Int) -> String {
        let name = random.pick(Self.weekdayNames[number])
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return name.lowercased()
        case 1: return name.uppercased()
        default: return name
        }
    }

    mutating func weekdays() -> String {
        var items: [String] = []
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let first = Int.random(in: 0...6, using: &random)
            if random.chance(40) {
                let last =
                    random.chance(90)
                    ? Int.random(in: first...6, using: &random) : Int.random(in: 0...6, using: &random)
                items.append(weekdayName(first) + (random.chance(80) ? ".." : "-") + weekdayName(last))
            } else {
                items.append(weekdayName(first))
            }
        }
        return items.joined(separator: ",") + (random.chance(5) ? "," : "")
    }

    mutating func date() -> String {
        let endOfMonth = random.chance(12)
        let day = endOfMonth ? chain(1, 7, width: 2, starChance: 0) : chain(1, 31, width: 2, starChance: 40)
        let month = chain(1, 12, width: 2, starChance: 45)
        let separator = endOfMonth ? "~" : "-"
        if random.chance(40) { return month + separator + day }
        let year =
            random.chance(15) ? chain(26, 35, width: 2, starChance: 0) : chain(2026, 2034, width: 4, starChance: 65)
        return year + "-" + month + separator + day
    }

    mutating func time() -> String {
        let hour = chain(0, 23, width: 2, starChance: 30)
        let minute = chain(0, 59, width: 2, starChance: 20)
        guard random.chance(45) else { return hour + ":" + minute }
        return hour + ":" + minute + ":" + seconds()
    }

    mutating func seconds() -> String {
        if random.chance(25) { return "*" }
        if random.chance(25) {
            // Fractions: values, repetitions and ranges with decimals.
            return random.pick([
                "0/0.5", "1.25", "00/7.5", "10..20/2.5", "30.000001", "5,15.5", "0.1234567",
                "59.999999", "0..59/0.75", "1..1.5/0.25", "1..1.5",
            ])
        }
        return chain(0, 59, width: 2, starChance: 0)
    }

    /// `*` or 1–3 components: values, `a..b`, `a/n`, `a..b/n`; now and then
    /// out of range or backwards, so that refusals are compared too.
    mutating func chain(_ low: Int, _ high: Int, width: Int, starChance: Int) -> String {
        if random.chance(starChance) { return "*" }
        var items: [String] = []
        for _ in 0..<(random.chance(70) ? 1 : Int.random(in: 2...3, using: &random)) {
            let start = value(low, high)
            let text = padded(start, width)
            switch Int.random(in: 0..<10, using: &random) {
            case 0...5:
                items.append(text)
            case 6, 7:
                let stop =
                    random.chance(92) ? Int.random(in: min(start, high)...high, using: &random) : value(low, high)
                let repeatText =
                    random.chance(40) ? "/" + String(Int.random(in: 1...max(1, (high - low) / 3), using: &random)) : ""
                items.append(text + ".." + padded(stop, width) + repeatText)
            default:
                let step = random.chance(95) ? Int.random(in: 1...max(1, (high - low) / 2), using: &random) : 0
                items.append(text + "/" + String(step))
            }
        }
        return items.joined(separator: ",")
    }

    mutating func value(_ low: Int, _ high: Int) -> Int {
        random.chance(3) ? high + Int.random(in: 1...3, using: &random) : Int.random(in: low...high, using: &random)
    }

    mutating func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        guard random.chance(60), digits.count < width else { return digits }
        return String(repeating: "0", count: width - digits.count) + digits
    }
}
