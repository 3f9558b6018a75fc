//! LLM mode: each event of an OpenAI-compatible stream (`/v1/chat/completions` or
//! `/v1/completions` with `"stream": true`) read as a chunk: does it carry output text (a content
//! delta: one token, as servers stream them), and does it report `usage`? Parsed with serde
//! without allocating: the text is only checked for being non-empty, the rest skipped.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, SeqAccess, Visitor};

/// The streaming API an LLM step speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// OpenAI's chat completions (`choices[0].delta.content`) and completions
    /// (`choices[0].text`), with `usage.completion_tokens`: what vLLM, SGLang, TGI, llama.cpp's
    /// server and Ollama's OpenAI endpoint all stream.
    OpenAi,
}

impl Api {
    /// Its name in plans (`llm = "openai"`).
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
        }
    }

    /// Every API, by name.
    pub const ALL: &[Api] = &[Self::OpenAi];
}

/// What one event's chunk says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Chunk {
    /// It carries output text.
    pub has_content: bool,
    /// Its `usage.completion_tokens`, when it reports usage.
    pub usage: Option<u64>,
}

/// Reads one event's `data` as a chunk of `api`; data that is not such a chunk carries nothing.
pub fn read_chunk(api: Api, data: &[u8]) -> Chunk {
    match api {
        Api::OpenAi => match serde_json::from_slice::<OpenAiChunk>(data) {
            Ok(c) => Chunk {
                has_content: c.choices.0,
                usage: c.usage.and_then(|u| u.completion_tokens),
            },
            Err(_) => Chunk::default(),
        },
    }
}

#[derive(Deserialize)]
struct OpenAiChunk {
    #[serde(default)]
    choices: FirstHasText,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    completion_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    /// Completions (not chat) stream their text here.
    #[serde(default)]
    text: Option<NonEmpty>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<NonEmpty>,
    /// Reasoning models (DeepSeek-R1 on vLLM, …) stream their thinking tokens here first.
    #[serde(default)]
    reasoning_content: Option<NonEmpty>,
}

impl Choice {
    fn has_text(&self) -> bool {
        let delta = self.delta.as_ref();
        [
            delta.and_then(|d| d.content),
            delta.and_then(|d| d.reasoning_content),
            self.text,
        ]
        .into_iter()
        .any(|t| t.is_some_and(|t| t.0))
    }
}

/// Whether a JSON string is non-empty, read without keeping it.
#[derive(Clone, Copy)]
struct NonEmpty(bool);

impl<'de> Deserialize<'de> for NonEmpty {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = NonEmpty;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<NonEmpty, E> {
                Ok(NonEmpty(!v.is_empty()))
            }
        }
        d.deserialize_str(V)
    }
}

/// Whether the first of the `choices` has text; the others are skipped.
#[derive(Default)]
struct FirstHasText(bool);

impl<'de> Deserialize<'de> for FirstHasText {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FirstHasText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FirstHasText, A::Error> {
                let first = seq.next_element::<Choice>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstHasText(first.is_some_and(|c| c.has_text())))
            }
        }
        d.deserialize_seq(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(json: &str) -> Chunk {
        read_chunk(Api::OpenAi, json.as_bytes())
    }

    #[test]
    fn content_deltas_and_usage_are_read() {
        let role = r#"{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#;
        assert_eq!(chunk(role), Chunk::default());
        let token = r#"{"choices":[{"index":0,"delta":{"content":"Hel\"lo"}}],"usage":null}"#;
        assert_eq!(
            chunk(token),
            Chunk {
                has_content: true,
                usage: None
            }
        );
        let usage = r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":42,"total_tokens":47}}"#;
        assert_eq!(
            chunk(usage),
            Chunk {
                has_content: false,
                usage: Some(42)
            }
        );
        let completion = r#"{"choices":[{"text":" world","index":0},{"text":"x"}]}"#;
        assert!(chunk(completion).has_content);
        let reasoning = r#"{"choices":[{"delta":{"content":null,"reasoning_content":"hmm"}}]}"#;
        assert!(chunk(reasoning).has_content);
    }

    #[test]
    fn what_is_not_a_chunk_carries_nothing() {
        for data in [
            "",
            "[DONE]",
            "{\"error\":{\"message\":\"overloaded\"}}",
            "{\"choices\":3}",
        ] {
            assert_eq!(chunk(data), Chunk::default(), "{data}");
        }
    }
}
