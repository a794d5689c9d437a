// The country codes a transfer's `allowed_countries` may name (docs/transfers.md, "Countries"):
// the 249 codes ISO 3166-1 alpha-2 assigns officially, and XK (Kosovo), user-assigned but the
// code the offline country database (lib/net/country.ts) answers for Kosovo. Written out rather
// than read from Intl: Intl also knows withdrawn and exceptional codes (UK, EU, SU, ZZ…), and its
// list changes with the ICU data of the Node build.

const ASSIGNED = `
AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV
BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES
ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE
IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY
MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU
NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM
SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE
VG VI VN VU WF WS YE YT ZA ZM ZW`;

/** Every code accepted, upper case, sorted. */
export const COUNTRY_CODES: readonly string[] = [...ASSIGNED.trim().split(/\s+/), 'XK'].sort();

const KNOWN: ReadonlySet<string> = new Set(COUNTRY_CODES);

/** Whether `code` (upper case) is one of COUNTRY_CODES. */
export const isCountryCode = (code: string): boolean => KNOWN.has(code);
