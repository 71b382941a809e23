/**
 * SDK datetime columns: strict parse/write round trips for every candidate format (1850, 2150, leap days),
 * offsets, the direct field printer against luxon's toFormat, format inference on realistic columns (integers
 * never taken for dates), granularity inference, and independence from TZ / luxon's default zone and locale.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DateTime, FixedOffsetZone, Settings } from "luxon";
import { DATETIME_FORMATS, DatetimeFormat, inferDatetimeFormat } from "../src/sdk/metadata/datetime";
import { GRANULARITY_SECONDS, inferGranularity, type Granularity, type ParsedDatetime } from "../src/sdk/metadata/granularity";

/** Seconds since the epoch of a UTC wall-clock time (month 1-12). */
function utc(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, ms);
  return t.getTime() / 1000;
}

/** Deterministic uniform draws in [0, 1) (an LCG; enough for spreading test instants). */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const hasOffsetToken = (f: DatetimeFormat): boolean => f.hasOffset && !f.format.includes("'Z'");

test("constants: granularity units, required candidates, no all-digit candidate", () => {
  assert.deepEqual(
    { ...GRANULARITY_SECONDS },
    { year: 31556952, month: 2629746, day: 86400, hour: 3600, minute: 60, second: 1, millisecond: 0.001 },
    "months and years: the mean Gregorian lengths (their lattices use calendar arithmetic)",
  );
  assert.ok(Object.isFrozen(GRANULARITY_SECONDS) && Object.isFrozen(DATETIME_FORMATS));
  const required = ["yyyy-MM-dd", "yyyy/MM/dd", "yyyy/MM/dd HH:mm", "yyyy/MM/dd HH:mm:ss", "LLL dd yyyy", "LLL d yyyy"];
  required.push("MM/dd/yyyy", "M/d/yyyy", "dd/MM/yyyy", "dd.MM.yyyy", "d.M.yyyy");
  for (const sep of ["'T'", " "]) {
    for (const time of ["HH:mm", "HH:mm:ss", "HH:mm:ss.SSS"]) {
      for (const zone of ["", "ZZ", "'Z'"]) required.push(`yyyy-MM-dd${sep}${time}${zone}`);
    }
  }
  for (const f of required) assert.ok(DATETIME_FORMATS.includes(f), `candidate ${f}`);
  assert.equal(new Set(DATETIME_FORMATS).size, DATETIME_FORMATS.length, "no duplicates");
  assert.ok(DATETIME_FORMATS.indexOf("MM/dd/yyyy") < DATETIME_FORMATS.indexOf("dd/MM/yyyy"), "US order first");
  for (const f of DATETIME_FORMATS) {
    const text = new DatetimeFormat(f).write(utc(2001, 3, 15, 10, 20, 30), 0);
    assert.match(text, /\D/, `${f} writes a non-digit character (${text})`);
    for (const int of ["20010315", "12", "00501", "1700000000"]) assert.equal(new DatetimeFormat(f).parse(int), undefined);
  }
});

test("properties: hasOffset and finest from the tokens", () => {
  const cases: [string, boolean, Granularity][] = [
    ["yyyy-MM-dd", false, "day"],
    ["yyyy-MM", false, "day"],
    ["yyyy-MM-dd'T'HH", false, "hour"],
    ["yyyy/MM/dd HH:mm", false, "minute"],
    ["yyyy-MM-dd'T'HH:mm:ssZZ", true, "second"],
    ["yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", true, "millisecond"],
    ["yyyy-MM-dd HH:mm:ssZZZ", true, "second"],
    ["yyyy-MM-dd h:mm a Z", true, "minute"],
    ["LLL d yyyy", false, "day"],
    ["yyyyMMdd", false, "day"],
    ["yyyy-MM-dd 'Zulu'", false, "day"],
  ];
  for (const [format, hasOffset, finest] of cases) {
    const f = new DatetimeFormat(format);
    assert.equal(f.format, format);
    assert.equal(f.hasOffset, hasOffset, `${format} hasOffset`);
    assert.equal(f.finest, finest, `${format} finest`);
  }
});

test("constructor rejects formats luxon cannot use deterministically", () => {
  const bad = [
    "", // nothing
    "'hello'", // literal only
    "---", // punctuation only
    "HH:mm", // no year: luxon would use today's date
    "MM/dd", // no year
    "yyyy-MM-dd at HH", // unquoted letters (a, t)
    "yyyy-MM-dd foo", // unknown letters
    "yyyy-MM-dd HH:mm z", // zone name
    "yyyy-MM-dd HH:mm ZZZZ", // zone abbreviation
    "D", // locale-dependent macro
    "yyyy-MM-dd T", // macro
    "X", // unix seconds: luxon formats but does not parse it
    "yyyyy-MM-dd", // luxon parses but does not format it
    "yyyy-MM-dd hh:mm", // 12-hour clock without meridiem
    "yyyy-MM-dd HH:mm a", // meridiem with a 24-hour clock
  ];
  for (const format of bad) assert.throws(() => new DatetimeFormat(format), RangeError, `"${format}" is refused`);
});

/** Instants whose sub-unit remainders are under half a unit at every granularity (so rounding = truncation). */
const INSTANTS: [number, number, number, number, number, number, number][] = [
  [1850, 6, 1, 0, 0, 0, 0],
  [1850, 6, 1, 10, 20, 15, 250],
  [2150, 12, 31, 0, 0, 0, 0],
  [2150, 12, 31, 11, 29, 29, 499],
  [2000, 2, 29, 10, 20, 15, 250],
  [2024, 2, 29, 0, 0, 0, 0],
  [1970, 1, 1, 0, 0, 0, 0],
  [1, 1, 1, 0, 0, 0, 0],
  [9999, 12, 31, 9, 9, 9, 9],
];

/** Whether a format writes a two-digit year (`yy`, not `yyyy`). */
const twoDigitYear = (format: string): boolean => /(^|[^y])yy([^y]|$)/.test(format);

/** `local` (wall-clock ms) truncated to the format's finest unit. */
function truncate(localMs: number, g: Granularity): number {
  const unit = GRANULARITY_SECONDS[g] * 1000;
  return Math.floor(localMs / unit) * unit;
}

test("round trip parse -> write for every candidate format (1850, 2150, leap days, years 0001 and 9999)", () => {
  const formats = [...DATETIME_FORMATS, "yyyyMMdd", "EEE, dd LLL yyyy HH:mm:ss ZZZ", "yy-MM-dd", "yyyy-MM-dd h:mm:ss a"];
  for (const format of formats) {
    const f = new DatetimeFormat(format);
    for (const [y, mo, d, h, mi, s, ms] of INSTANTS) {
      if (twoDigitYear(format) && (y < 1930 || y > 2029)) continue; // two-digit years cover 1930..2029
      for (const offset of hasOffsetToken(f) ? [0, 330, -480] : [0, 120]) {
        const local = utc(y, mo, d, h, mi, s, ms) * 1000;
        const expectedLocal = truncate(local, f.finest);
        const seconds = (local - offset * 60000) / 1000;
        if (!hasOffsetToken(f) && offset !== 0) {
          assert.equal(f.write(local / 1000, offset), f.write(local / 1000, 0), `${format} ignores the offset`);
          continue;
        }
        const text = f.write(seconds, offset);
        const p = f.parse(text);
        assert.ok(p, `${format}: "${text}" parses`);
        assert.equal(p.offset, offset, `${format}: "${text}" offset`);
        assert.equal(p.seconds, (expectedLocal - offset * 60000) / 1000, `${format}: "${text}" instant`);
        assert.equal(f.write(p.seconds, p.offset), text, `${format}: "${text}" writes back`);
      }
    }
  }
});

test("written texts: exact strings for representative formats", () => {
  const t = utc(2000, 2, 29, 10, 20, 15, 250);
  const cases: [string, number, string][] = [
    ["yyyy-MM-dd", 0, "2000-02-29"],
    ["yyyy-MM-dd'T'HH:mm:ss.SSSZZ", 330, "2000-02-29T15:50:15.250+05:30"],
    ["yyyy-MM-dd'T'HH:mm:ss.SSSZZ", -480, "2000-02-29T02:20:15.250-08:00"],
    ["yyyy-MM-dd HH:mm:ss'Z'", 330, "2000-02-29 10:20:15Z"],
    ["yyyy-MM-dd HH:mm:ssZZZ", -480, "2000-02-29 02:20:15-0800"],
    ["yyyy-MM-dd HH:mmZ", 330, "2000-02-29 15:50+5:30"],
    ["yyyy/MM/dd HH:mm", 0, "2000/02/29 10:20"],
    ["M/d/yyyy H:mm", 0, "2/29/2000 10:20"],
    ["dd.MM.yyyy", 0, "29.02.2000"],
    ["LLL d, yyyy", 0, "Feb 29, 2000"],
    ["LLLL d, yyyy", 0, "February 29, 2000"],
    ["dd-LLL-yyyy", 0, "29-Feb-2000"],
    ["yyyy-MM-dd h:mm a", 0, "2000-02-29 10:20 AM"],
    ["yyyyMMdd", 0, "20000229"],
  ];
  for (const [format, offset, text] of cases) assert.equal(new DatetimeFormat(format).write(t, offset), text, format);
  assert.equal(new DatetimeFormat("LLL dd yyyy").write(utc(1850, 6, 1), 0), "Jun 01 1850");
  assert.equal(new DatetimeFormat("yyyy-MM-dd").write(utc(1, 1, 1), 0), "0001-01-01");
});

test("the direct field printer agrees with luxon's toFormat (random instants and offsets)", () => {
  const rand = lcg(7);
  const formats = [
    ...DATETIME_FORMATS,
    "y-M-d H:m:s.S",
    "yyyy-MM-dd h:mm a",
    "yyyy-MM-dd hh:mm:ss a ZZZ",
    "MMM dd yyyy HH:mmZ",
    "MMMM d yyyy",
    "yyyyMMdd'T'HHmmss.SSSZZ",
  ];
  for (const format of formats) {
    const f = new DatetimeFormat(format);
    const [from, to] = twoDigitYear(format) ? [utc(1930, 1, 2), utc(2029, 12, 30)] : [utc(2, 1, 1), utc(9999, 12, 30)];
    for (let i = 0; i < 300; i++) {
      const ms = Math.round(from * 1000 + rand() * (to - from) * 1000);
      const offset = hasOffsetToken(f) ? Math.round((rand() - 0.5) * 2 * 18 * 60) : 0;
      const zone = hasOffsetToken(f) ? FixedOffsetZone.instance(offset) : FixedOffsetZone.utcInstance;
      const unit = GRANULARITY_SECONDS[f.finest] * 1000;
      const onLattice = Math.round((ms + offset * 60000) / unit) * unit - offset * 60000;
      const expected = DateTime.fromMillis(onLattice, { zone, locale: "en-US" }).toFormat(format);
      assert.equal(f.write(ms / 1000, offset), expected, `${format} at ${ms} ms, offset ${offset}`);
    }
  }
});

test("two-digit years are read in 1930..2029, as spreadsheets write them (Walmart's store openings: 7/1/62)", () => {
  assert.equal(inferDatetimeFormat(["7/1/62", "8/1/64", "12/9/71", "3/17/04", "5/18/05"])?.format, "M/d/yy");
  const f = new DatetimeFormat("M/d/yy");
  const year = (t: string): number | undefined => {
    const p = f.parse(t);
    return p && new Date(p.seconds * 1000).getUTCFullYear();
  };
  assert.equal(year("7/1/62"), 1962);
  assert.equal(year("3/17/04"), 2004);
  assert.equal(year("1/1/30"), 1930);
  assert.equal(year("12/31/29"), 2029);
  assert.equal(f.write(utc(1962, 7, 1), 0), "7/1/62");
  assert.equal(f.parse("07/01/62"), undefined, "padding the format does not write");
  assert.equal(f.parse("2/29/01"), undefined, "2001 is no leap year");
  assert.throws(() => f.write(utc(2030, 1, 1), 0), /1930\.\.2029/);
  assert.equal(new DatetimeFormat("dd/MM/yy").write(utc(1999, 12, 31), 0), "31/12/99");
});

test("strictness: padding, impossible dates, garbage, case, out-of-range years", () => {
  const iso = new DatetimeFormat("yyyy-MM-dd");
  assert.ok(iso.parse("2001-01-01"));
  for (const bad of ["2001-1-1", "2001-01-1", "2001-02-30", "2001-02-29", "2001-13-01", "2001-00-10", "0000-01-01"]) {
    assert.equal(iso.parse(bad), undefined, bad);
  }
  for (const bad of ["2001-01-01x", " 2001-01-01", "2001-01-01 ", "2001-01-01T00:00", "", "x2001-01-01", "2001/01/01"]) {
    assert.equal(iso.parse(bad), undefined, JSON.stringify(bad));
  }
  assert.ok(iso.parse("2000-02-29"), "leap day");
  assert.ok(iso.parse("9999-12-31") && iso.parse("0001-01-01"));
  const dt = new DatetimeFormat("yyyy-MM-dd'T'HH:mm");
  for (const bad of ["2001-01-01T24:00", "2001-01-01T23:60", "2001-01-01T1:00", "2001-01-01t10:00"]) {
    assert.equal(dt.parse(bad), undefined, bad);
  }
  const us = new DatetimeFormat("M/d/yyyy");
  assert.equal(us.parse("01/02/2001"), undefined, "padded text refused by the unpadded format");
  assert.deepEqual(us.parse("1/2/2001"), { seconds: utc(2001, 1, 2), offset: 0 });
  const names = new DatetimeFormat("LLL dd yyyy");
  assert.deepEqual(names.parse("Jan 01 2001"), { seconds: utc(2001, 1, 1), offset: 0 });
  for (const bad of ["jan 01 2001", "JAN 01 2001", "January 01 2001", "Jan. 01 2001", "Sept 01 2001", "Jan 1 2001"]) {
    assert.equal(names.parse(bad), undefined, bad);
  }
  const zz = new DatetimeFormat("yyyy-MM-dd'T'HH:mm:ssZZ");
  for (const bad of ["2021-03-04T10:00:00+0530", "2021-03-04T10:00:00Z", "2021-03-04T10:00:00", "2021-03-04T10:00:00+5:30"]) {
    assert.equal(zz.parse(bad), undefined, bad);
  }
  assert.equal(zz.parse("2021-03-04T10:00:00+19:00"), undefined, "offset beyond ±18:00");
  assert.equal(new DatetimeFormat("y-MM-dd").parse("10000-01-01"), undefined, "year 10000");
  assert.equal(new DatetimeFormat("yyyy-MM-dd'T'HH:mm:ss.SSS").parse("2001-01-01T00:00:00.5"), undefined);
});

test("offsets: +05:30 and -08:00 keep the instant and the offset; writing in a given offset", () => {
  const f = new DatetimeFormat("yyyy-MM-dd'T'HH:mm:ssZZ");
  assert.deepEqual(f.parse("2021-03-04T10:00:00+05:30"), { seconds: utc(2021, 3, 4, 4, 30), offset: 330 });
  assert.deepEqual(f.parse("2021-03-04T10:00:00-08:00"), { seconds: utc(2021, 3, 4, 18), offset: -480 });
  assert.deepEqual(f.parse("2021-03-04T10:00:00+00:00"), { seconds: utc(2021, 3, 4, 10), offset: 0 });
  assert.deepEqual(f.parse("2021-03-04T10:00:00+02:00"), { seconds: utc(2021, 3, 4, 8), offset: 120 });
  const t = utc(2021, 3, 4, 10);
  assert.equal(f.write(t, 330), "2021-03-04T15:30:00+05:30");
  assert.equal(f.write(t, -480), "2021-03-04T02:00:00-08:00");
  assert.equal(f.write(t, 0), "2021-03-04T10:00:00+00:00");
  assert.equal(f.write(utc(2021, 3, 4, 20), 330), "2021-03-05T01:30:00+05:30", "the local date can change");
  const techie = new DatetimeFormat("yyyy-MM-dd HH:mm:ssZZZ");
  assert.deepEqual(techie.parse("2021-03-04 10:00:00+0530"), { seconds: utc(2021, 3, 4, 4, 30), offset: 330 });
  const z = new DatetimeFormat("yyyy-MM-dd'T'HH:mm:ss'Z'");
  assert.deepEqual(z.parse("2021-03-04T10:00:00Z"), { seconds: t, offset: 0 });
  assert.equal(z.write(t, 330), "2021-03-04T10:00:00Z", "a literal Z writes UTC whatever the offset");
  const plain = new DatetimeFormat("yyyy-MM-dd HH:mm");
  assert.equal(plain.write(t, -480), "2021-03-04 10:00", "no offset: UTC wall clock");
  assert.throws(() => f.write(t, 1.5), RangeError);
  assert.throws(() => f.write(t, 19 * 60), RangeError);
  assert.throws(() => f.write(Number.NaN, 0), RangeError);
  assert.throws(() => f.write(Infinity, 0), RangeError);
  assert.throws(() => plain.write(utc(10000, 1, 1), 0), RangeError, "year 10000");
  assert.throws(() => plain.write(utc(1, 1, 1) - 60, 0), RangeError, "year 0");
});

test("write rounds to the millisecond, then to the format's resolution", () => {
  const sec = new DatetimeFormat("yyyy-MM-dd HH:mm:ss");
  const t = utc(2001, 1, 1, 10);
  assert.equal(sec.write(t - 1e-7, 0), "2001-01-01 10:00:00", "59.9999999 s is :00");
  assert.equal(sec.write(t - 0.0004, 0), "2001-01-01 10:00:00", "59.9996 s rounds to the next second");
  assert.equal(sec.write(t + 0.4, 0), "2001-01-01 10:00:00");
  assert.equal(sec.write(t - 0.6, 0), "2001-01-01 09:59:59");
  const min = new DatetimeFormat("yyyy/MM/dd HH:mm");
  assert.equal(min.write(t - 0.001, 0), "2001/01/01 10:00");
  assert.equal(min.write(utc(2001, 12, 31, 23, 59, 59, 999), 0), "2002/01/01 00:00");
  const day = new DatetimeFormat("yyyy-MM-dd");
  assert.equal(day.write(utc(2001, 3, 15) - 1e-6, 0), "2001-03-15");
  assert.equal(day.write(utc(1850, 6, 1) - 0.0001, 0), "1850-06-01", "negative seconds");
  const ms = new DatetimeFormat("yyyy-MM-dd HH:mm:ss.SSS");
  assert.equal(ms.write(utc(2001, 1, 1) + 0.0014999, 0), "2001-01-01 00:00:00.001");
  assert.equal(ms.write(utc(1969, 12, 31, 23, 59, 59, 999), 0), "1969-12-31 23:59:59.999");
  const off = new DatetimeFormat("yyyy-MM-ddZZ");
  assert.equal(off.write(utc(2021, 3, 3, 22) + 1, 120), "2021-03-04+02:00", "rounded in the written offset");
});

test("an all-digit format works when given explicitly: yyyyMMdd", () => {
  const f = new DatetimeFormat("yyyyMMdd");
  assert.ok(!DATETIME_FORMATS.includes("yyyyMMdd"));
  const p = f.parse("20010315");
  assert.deepEqual(p, { seconds: utc(2001, 3, 15), offset: 0 });
  assert.equal(f.write(p.seconds, p.offset), "20010315");
  for (const bad of ["2001031", "200103150", "20010230", "2001-03-15"]) assert.equal(f.parse(bad), undefined, bad);
  assert.equal(inferDatetimeFormat(["20010315", "20010316"]), undefined, "never inferred");
});

test("inference on realistic columns", () => {
  const step = (start: number, stepS: number, n: number, format: string): string[] => {
    const f = new DatetimeFormat(format);
    return Array.from({ length: n }, (_, i) => f.write(start + i * stepS, 0));
  };
  const minutes = step(utc(2001, 1, 1, 0, 47), 3600 * 7 + 60 * 13, 500, "yyyy/MM/dd HH:mm");
  assert.equal(minutes[0], "2001/01/01 00:47");
  assert.deepEqual(inferDatetimeFormat(minutes), { format: "yyyy/MM/dd HH:mm", parsed: 500 });

  const hourly = step(utc(2015, 1, 1, 1), 3600, 1000, "yyyy/MM/dd HH:mm:ss");
  assert.equal(hourly[0], "2015/01/01 01:00:00");
  const inferred = inferDatetimeFormat(hourly);
  assert.deepEqual(inferred, { format: "yyyy/MM/dd HH:mm:ss", parsed: 1000 });
  const f = new DatetimeFormat(inferred.format);
  assert.equal(inferGranularity(hourly.map((v) => f.parse(v)!), f.finest), "hour");

  const days = step(utc(1970, 1, 1), 86400, 365, "yyyy-MM-dd");
  assert.equal(days[0], "1970-01-01");
  assert.deepEqual(inferDatetimeFormat(days), { format: "yyyy-MM-dd", parsed: 365 });

  assert.deepEqual(inferDatetimeFormat(["Jan 01 2001", "Feb 15 2001", "Dec 31 1999"]), { format: "LLL dd yyyy", parsed: 3 });
  assert.deepEqual(inferDatetimeFormat(["Jan 1 2001", "Feb 15 2001"]), { format: "LLL d yyyy", parsed: 2 });
  assert.deepEqual(inferDatetimeFormat(["13/02/2001", "01/02/2001"]), { format: "dd/MM/yyyy", parsed: 2 });
  assert.deepEqual(inferDatetimeFormat(["02/13/2001", "01/02/2001"]), { format: "MM/dd/yyyy", parsed: 2 });
  assert.deepEqual(inferDatetimeFormat(["01/02/2001", "03/04/2001"]), { format: "MM/dd/yyyy", parsed: 2 }, "tie: US");
  assert.deepEqual(inferDatetimeFormat(["1/2/2001", "12/24/2001"]), { format: "M/d/yyyy", parsed: 2 });
  assert.deepEqual(inferDatetimeFormat(["15.03.2001", "01.12.2001"]), { format: "dd.MM.yyyy", parsed: 2 });
  assert.deepEqual(inferDatetimeFormat(["15.3.2001", "1.12.2001"]), { format: "d.M.yyyy", parsed: 2 });
  assert.deepEqual(inferDatetimeFormat(["2021-03-04T10:00:00+05:30", "2021-03-04T10:00:00-08:00"]), {
    format: "yyyy-MM-dd'T'HH:mm:ssZZ",
    parsed: 2,
  });
  assert.deepEqual(inferDatetimeFormat(["2021-03-04T10:00:00.120Z"]), { format: "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", parsed: 1 });
  assert.deepEqual(inferDatetimeFormat(["2021-03-04 10:00"]), { format: "yyyy-MM-dd HH:mm", parsed: 1 });

  const ints = Array.from({ length: 300 }, (_, i) => String(20010101 + i));
  assert.equal(inferDatetimeFormat(ints), undefined);
  assert.equal(inferDatetimeFormat(["20010101", "12", "00501", "1", "-5", "3.14", "1e5", "1,000", "2001"]), undefined);
  assert.equal(inferDatetimeFormat(["", " ", "n/a", "abc"]), undefined);
  assert.equal(inferDatetimeFormat([]), undefined);
});

test("a mixed column returns the majority format with its count", () => {
  const iso = new DatetimeFormat("yyyy-MM-dd");
  const us = new DatetimeFormat("MM/dd/yyyy");
  const values: string[] = [];
  for (let i = 0; i < 60; i++) values.push(iso.write(utc(2001, 1, 1) + i * 86400, 0));
  for (let i = 0; i < 40; i++) values.push(us.write(utc(2003, 1, 1) + i * 86400, 0));
  values.push("n/a", "unknown", "2001-02-30", "2001-1-5");
  assert.deepEqual(inferDatetimeFormat(values), { format: "yyyy-MM-dd", parsed: 60 });
  assert.deepEqual(inferDatetimeFormat([...values.slice(60, 100), ...values.slice(0, 30)]), { format: "MM/dd/yyyy", parsed: 40 });
});

test("large columns: the count is over all values, and a tie on the sample is decided by all values", () => {
  const f = new DatetimeFormat("yyyy-MM-dd HH:mm:ss");
  const values = Array.from({ length: 12000 }, (_, i) => f.write(utc(2010, 1, 1) + i * 3607, 0));
  for (let i = 5001; i < 12000; i += 1000) values[i] = `garbage ${i}`; // 7 values, wherever the sample falls
  assert.deepEqual(inferDatetimeFormat(values), { format: "yyyy-MM-dd HH:mm:ss", parsed: 11993 });

  // Day-first dates whose day is 1..9 also read as month-first; the three that do not sit outside the
  // first 2,000 values and between the evenly spread ones (every 9th value from 2,000 on for 20,000 values).
  const dm = new DatetimeFormat("dd/MM/yyyy");
  const column = Array.from({ length: 20000 }, (_, i) =>
    dm.write(utc(1000 + Math.floor(i / 108), 1 + (Math.floor(i / 9) % 12), 1 + (i % 9)), 0),
  );
  assert.equal(new Set(column).size, 20000);
  column[2001] = "13/01/9000";
  column[2002] = "14/01/9000";
  column[2003] = "15/01/9000";
  assert.equal(column.filter((v) => new DatetimeFormat("MM/dd/yyyy").parse(v) !== undefined).length, 19997);
  assert.deepEqual(inferDatetimeFormat(column), { format: "dd/MM/yyyy", parsed: 20000 });
});

test("granularity inference: day, hour, minute, second, millisecond, capped at the format's finest", () => {
  const at = (secs: number[], offset = 0): ParsedDatetime[] => secs.map((seconds) => ({ seconds, offset }));
  const days = at([utc(1850, 6, 1), utc(2001, 3, 15), utc(2150, 12, 31), utc(1969, 12, 31)]);
  assert.equal(inferGranularity(days, "millisecond"), "day");
  assert.equal(inferGranularity(days, "minute"), "day", "coarser than finest is allowed");
  assert.equal(inferGranularity(at([utc(2001, 3, 15), utc(1850, 6, 1, 13)]), "second"), "hour");
  assert.equal(inferGranularity(at([utc(2001, 3, 15, 1), utc(1850, 6, 1, 13, 59)]), "second"), "minute");
  assert.equal(inferGranularity(at([utc(2001, 3, 15, 1), utc(1901, 6, 1, 13, 59, 1)]), "millisecond"), "second");
  assert.equal(inferGranularity(at([utc(2001, 3, 15, 1), utc(1901, 6, 1, 13, 59, 1, 1)]), "millisecond"), "millisecond");
  assert.equal(inferGranularity(at([utc(2001, 3, 15, 1, 0, 30)]), "minute"), "minute", "never finer than finest");
  assert.equal(inferGranularity(at([utc(2001, 3, 15, 1, 30)]), "hour"), "hour");
  assert.equal(inferGranularity(at([utc(2001, 3, 15, 1)]), "day"), "day");
  assert.equal(inferGranularity([], "second"), "day", "no values");
  assert.equal(inferGranularity(at([utc(2001, 1, 1) + 1.001, utc(2001, 1, 1) + 0.002]), "millisecond"), "millisecond");
  assert.equal(inferGranularity(at([utc(2001, 1, 1) + 59.9999999]), "millisecond"), "minute", "rounded to the millisecond");
  // Local midnight at +02:00 is 22:00 UTC the day before.
  const midnight = utc(2021, 3, 3, 22);
  assert.equal(inferGranularity(at([midnight, midnight + 86400], 120), "second"), "day");
  assert.equal(inferGranularity(at([midnight, midnight + 86400], 0), "second"), "hour");
  assert.equal(inferGranularity(at([utc(2021, 3, 4, 4, 30)], 330), "second"), "hour", "+05:30");
  const f = new DatetimeFormat("yyyy-MM-dd'T'HH:mm:ssZZ");
  const parsed = ["2021-03-04T00:00:00+02:00", "2021-03-05T00:00:00-08:00", "2021-03-06T00:00:00+05:30"].map((v) => f.parse(v)!);
  assert.equal(inferGranularity(parsed, f.finest), "day");
  const gen = function* () {
    yield* parsed;
  };
  assert.equal(inferGranularity(gen(), f.finest), "day", "any iterable");
});

test("independent of TZ, luxon's default zone and default locale", () => {
  const saved = { tz: process.env.TZ, zone: Settings.defaultZone, locale: Settings.defaultLocale };
  try {
    process.env.TZ = "America/New_York";
    Settings.defaultZone = "Asia/Kolkata";
    Settings.defaultLocale = "fr-FR";
    assert.equal(new Date(utc(2001, 1, 1) * 1000).getTimezoneOffset(), 300, "the process time zone did change");
    const f = new DatetimeFormat("yyyy-MM-dd HH:mm");
    assert.deepEqual(f.parse("2001-03-15 10:20"), { seconds: utc(2001, 3, 15, 10, 20), offset: 0 });
    assert.deepEqual(f.parse("2021-03-14 02:30"), { seconds: utc(2021, 3, 14, 2, 30), offset: 0 }, "a New York DST gap");
    assert.equal(f.write(utc(2001, 3, 15, 10, 20), 0), "2001-03-15 10:20");
    const names = new DatetimeFormat("LLL dd yyyy");
    assert.deepEqual(names.parse("Mar 15 2001"), { seconds: utc(2001, 3, 15), offset: 0 });
    assert.equal(names.parse("mars 15 2001"), undefined);
    assert.equal(names.write(utc(2001, 7, 4), 0), "Jul 04 2001");
    assert.equal(new DatetimeFormat("LLL dd yyyy 'at' HH:mm:ss EEE").write(utc(2001, 7, 4, 9), 0), "Jul 04 2001 at 09:00:00 Wed");
    assert.deepEqual(inferDatetimeFormat(["Mar 15 2001", "Jul 04 2001"]), { format: "LLL dd yyyy", parsed: 2 });
    assert.equal(inferGranularity([f.parse("2001-03-15 00:00")!], f.finest), "day");
  } finally {
    if (saved.tz === undefined) delete process.env.TZ;
    else process.env.TZ = saved.tz;
    Settings.defaultZone = saved.zone;
    Settings.defaultLocale = saved.locale;
  }
});
