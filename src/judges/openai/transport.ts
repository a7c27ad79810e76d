/** How a chat-completions body reaches an OpenAI-compatible server and its JSON comes back. */
export interface ChatTransport {
  readonly endpoint: string;
  /**
   * Resolves with the parsed JSON body of a 2xx answer; rejects with a JUDGE_* RubricateError.
   * `serialized` is `body` as JSON, when the caller already has it (saves a serialisation).
   */
  postChatCompletion(body: Record<string, unknown>, signal: AbortSignal, serialized?: string): Promise<unknown>;
  close(): void;
}
