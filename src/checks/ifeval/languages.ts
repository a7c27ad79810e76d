/** Language codes for `language:response_language`. */

/** IFEval's language list (ISO 639-1 → name), used for readable criterion text. */
export const ifevalLanguageNames: Readonly<Record<string, string>> = {
  en: 'English', es: 'Spanish', pt: 'Portuguese', ar: 'Arabic', hi: 'Hindi', fr: 'French', ru: 'Russian',
  de: 'German', ja: 'Japanese', it: 'Italian', bn: 'Bengali', uk: 'Ukrainian', th: 'Thai', ur: 'Urdu',
  ta: 'Tamil', te: 'Telugu', bg: 'Bulgarian', ko: 'Korean', pl: 'Polish', he: 'Hebrew', fa: 'Persian',
  vi: 'Vietnamese', ne: 'Nepali', sw: 'Swahili', kn: 'Kannada', mr: 'Marathi', gu: 'Gujarati', pa: 'Punjabi',
  ml: 'Malayalam', fi: 'Finnish',
};

/** Every code langdetect can answer (its 55 profiles); any other target could never match. */
export const langdetectLanguages: ReadonlySet<string> = new Set([
  'af', 'ar', 'bg', 'bn', 'ca', 'cs', 'cy', 'da', 'de', 'el', 'en', 'es', 'et', 'fa', 'fi', 'fr', 'gu', 'he',
  'hi', 'hr', 'hu', 'id', 'it', 'ja', 'kn', 'ko', 'lt', 'lv', 'mk', 'ml', 'mr', 'ne', 'nl', 'no', 'pa', 'pl',
  'pt', 'ro', 'ru', 'sk', 'sl', 'so', 'sq', 'sv', 'sw', 'ta', 'te', 'th', 'tl', 'tr', 'uk', 'ur', 'vi',
  'zh-cn', 'zh-tw',
]);
