import { describe, expect, it } from 'vitest';
import { detectLanguage, detectLanguageProbabilities, supportedLanguages } from './detector.js';

describe('langdetect-compatible language detection', () => {
  it('loads the 55 langdetect profiles', () => {
    expect(supportedLanguages()).toHaveLength(55);
    expect(supportedLanguages()).toContain('zh-cn');
  });

  it('identifies clear text in several scripts', () => {
    expect(detectLanguage('The quick brown fox jumps over the lazy dog near the river bank.')).toBe('en');
    expect(detectLanguage("Le petit chat dort tranquillement sur le canapé du salon pendant l'après-midi.")).toBe('fr');
    expect(detectLanguage('Der schnelle braune Fuchs springt über den faulen Hund am Ufer des Flusses.')).toBe('de');
    expect(detectLanguage('Быстрая коричневая лиса прыгает через ленивую собаку у реки.')).toBe('ru');
    expect(detectLanguage('तेज़ भूरी लोमड़ी आलसी कुत्ते के ऊपर से कूदती है और नदी के किनारे जाती है।')).toBe('hi');
    expect(detectLanguage('빠른 갈색 여우가 게으른 개를 뛰어넘어 강가로 달려갑니다.')).toBe('ko');
  });

  it("matches IFEval's mixed-language examples", () => {
    expect(detectLanguage("Desayunamos en McDonald's hoy")).toBe('es');
    expect(detectLanguage('Today we visit the Louvre')).toBe('en');
  });

  it('returns null when the text has no letters to work from', () => {
    expect(detectLanguage('12345 !!! 678')).toBeNull();
    expect(detectLanguage('')).toBeNull();
  });

  it('ignores URLs and e-mail addresses', () => {
    expect(detectLanguage('https://example.com/das-ist-ein-langer-pfad-mit-worten hans.mueller@beispiel.de')).toBeNull();
  });

  it('is deterministic for a given seed and reports probabilities in order', () => {
    const text = 'Il était une fois une princesse qui vivait dans un grand château.';
    expect(detectLanguageProbabilities(text)).toEqual(detectLanguageProbabilities(text));
    const probabilities = detectLanguageProbabilities(text)!;
    expect(probabilities[0].language).toBe('fr');
    for (let index = 1; index < probabilities.length; index += 1) {
      expect(probabilities[index - 1].probability).toBeGreaterThanOrEqual(probabilities[index].probability);
    }
  });
});
