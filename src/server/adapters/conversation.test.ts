import { describe, expect, it } from 'vitest';
import { promptMessages, splitQuery, stripEndOfTurn } from './conversation.js';

const chatmlPrompt = '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nName some fruit.<|im_end|>\n<|im_start|>assistant\n';
const llama3Prompt =
  '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nName some fruit.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n';
const gemmaPrompt = '<bos><start_of_turn>user\nName some fruit.<end_of_turn>\n<start_of_turn>model\n';

describe('splitQuery', () => {
  it('takes the query minus the prompt when the query starts with the prompt, without end-of-turn tokens', () => {
    expect(splitQuery(`${chatmlPrompt}Apples.<|im_end|>`, chatmlPrompt)).toEqual({ promptText: chatmlPrompt, response: 'Apples.', rule: 'prompt-prefix' });
    expect(splitQuery(`${llama3Prompt}Pears.<|eot_id|>`, llama3Prompt).response).toBe('Pears.');
  });

  it('otherwise takes the text after the last assistant marker of a known template', () => {
    const multiTurn = `${chatmlPrompt}Apples.<|im_end|>\n<|im_start|>user\nMore?<|im_end|>\n<|im_start|>assistant\nPears too.<|im_end|>`;
    expect(splitQuery(multiTurn, 'a prompt that is not a prefix')).toMatchObject({ response: 'Pears too.', rule: 'assistant-marker' });
    expect(splitQuery(`${llama3Prompt}Pears.<|eot_id|>`).response).toBe('Pears.');
    expect(splitQuery(`${gemmaPrompt}Kiwis.<end_of_turn>`).response).toBe('Kiwis.');
    expect(splitQuery('<s>[INST] Name some fruit. [/INST] Plums.</s>').response).toBe('Plums.');
    expect(splitQuery('User: Name some fruit.\nAssistant: Figs.').response).toBe('Figs.');
  });

  it('falls back to the whole query when nothing marks the response', () => {
    expect(splitQuery('just some text')).toEqual({ promptText: '', response: 'just some text', rule: 'whole-query' });
  });

  it('strips stacked end-of-turn tokens and trailing whitespace only', () => {
    expect(stripEndOfTurn('  Answer <|im_end|>\n<|endoftext|>  ')).toBe('  Answer');
    expect(stripEndOfTurn('keeps </s> inside')).toBe('keeps </s> inside');
  });

  it('strips padding after the end of turn (a batch decoded with special tokens)', () => {
    expect(stripEndOfTurn('Answer</s><pad><pad>')).toBe('Answer');
    expect(stripEndOfTurn('Answer<|eot_id|><|finetune_right_pad_id|><|finetune_right_pad_id|>')).toBe('Answer');
    expect(stripEndOfTurn('Answer<|im_end|><|pad|>')).toBe('Answer');
  });
});

describe('promptMessages', () => {
  it('parses ChatML, Llama 3 and Gemma turns into messages, dropping the generation prompt', () => {
    const expected = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Name some fruit.' },
    ];
    expect(promptMessages(chatmlPrompt)).toEqual(expected);
    expect(promptMessages(llama3Prompt)).toEqual(expected);
    expect(promptMessages(gemmaPrompt)).toEqual([{ role: 'user', content: 'Name some fruit.' }]);
  });

  it('keeps earlier assistant turns, with Gemma `model` read as assistant', () => {
    const gemma = '<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\nHello!<end_of_turn>\n<start_of_turn>user\nFruit?<end_of_turn>\n<start_of_turn>model\n';
    expect(promptMessages(gemma)).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'Fruit?' },
    ]);
  });

  it('treats untemplated text as one user message', () => {
    expect(promptMessages('  Name some fruit.\n')).toEqual([{ role: 'user', content: 'Name some fruit.' }]);
  });
});
