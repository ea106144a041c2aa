"""Writes a corpus of varied text for comparing tokenizers (issue 12): the
project's own C++ and Markdown (code, prose, long punctuation runs), then
generated text in many scripts, emoji sequences, numbers in several digit
systems, runs of every kind of whitespace (U+3000, U+00A0, U+2028, and
U+180E, which PCRE2's `\\s` takes and Unicode's White_Space does not),
contractions in both cases, decomposed (NFD) text that NFC recomposes,
Hangul jamo, and added tokens, whole and broken, inside words. The same
seed gives the same bytes.

Usage: make_text_corpus.py SOURCE_DIR OUT [--bytes N] [--seed S]
"""

import argparse
import glob
import os
import random
import unicodedata

WORDS = {
    "latin": "the quick brown fox jumps over lazy dog compiler tensor kernel "
             "attention expert routing gated delta rule naïve café résumé "
             "Straße Œuvre façade jalapeño".split(),
    "cyrillic": "привет мир модель тензор ядро внимание эксперт Москва".split(),
    "greek": "καλημέρα κόσμε μοντέλο τανυστής προσοχή Ελλάδα".split(),
    "arabic": "مرحبا بالعالم نموذج انتباه خبير اللغة العربية".split(),
    "hebrew": "שלום עולם מודל קשב מומחה".split(),
    "devanagari": "नमस्ते दुनिया मॉडल ध्यान विशेषज्ञ हिन्दी".split(),
    "thai": "สวัสดีชาวโลก แบบจำลอง ความสนใจ".split(),
    "japanese": "こんにちは 世界 モデル テンソル 注意機構 専門家 カタカナ ひらがな".split(),
    "korean": "안녕하세요 세계 모델 텐서 주의 전문가 한국어".split(),
}
EMOJI = ["🙂", "😀", "🚀", "🧠", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷", "🇯🇵", "❤️",
         "☕", "🤖", "👩🏿‍💻", "✌🏻", "🫠", "🥲", "⭐", "🔥🔥🔥"]
SPACES = [" ", "  ", "    ", "\t", "\t\t", "\n", "\n\n", "\r\n", "\r\n\r\n",
          "\u3000", "\u00a0", "\u2028", "\u180e", " \u180e ", "\u2003\u2009",
          "\u200b", " \n ", "\n    ", "      \n"]
ADDED = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>",
         "<tool_call>", "</tool_call>", "<|vision_start|>", "<|im_sta",
         "<|im_end", "<think", "<|"]
CONTRACTIONS = ["it's", "IT'S", "we're", "WE'RE", "they've", "I'm", "you'll",
                "YOU'LL", "she'd", "don't", "DON'T", "o'clock", "'S", "'ll"]


def numbers(rng):
    forms = [
        lambda: str(rng.randint(0, 10 ** rng.randint(1, 12))),
        lambda: f"{rng.uniform(-1e6, 1e6):.{rng.randint(0, 6)}f}",
        lambda: "".join(chr(0x660 + int(d)) for d in str(rng.randint(0, 99999))),
        lambda: "".join(chr(0xFF10 + int(d)) for d in str(rng.randint(0, 9999))),
        lambda: "".join(chr(0x966 + int(d)) for d in str(rng.randint(0, 9999))),
        lambda: rng.choice(["Ⅻ", "ⅷ", "²", "³", "½", "⅓", "①", "㉑"]),
        lambda: f"{rng.randint(1, 12)}:{rng.randint(0, 59):02d}",
        lambda: f"0x{rng.getrandbits(32):08X}",
    ]
    return rng.choice(forms)()


def generated(rng, target):
    parts, size = [], 0
    scripts = list(WORDS)
    while size < target:
        kind = rng.random()
        if kind < 0.35:
            script = rng.choice(scripts)
            piece = " ".join(rng.choice(WORDS[script]) for _ in range(rng.randint(1, 12)))
            if script == "japanese" or rng.random() < 0.2:
                piece = piece.replace(" ", "")
        elif kind < 0.45:
            # CJK ideographs and Hangul syllables in long runs without spaces.
            low, high = rng.choice([(0x4E00, 0x9FA5), (0xAC00, 0xD7A3), (0x3041, 0x3096)])
            piece = "".join(chr(rng.randint(low, high)) for _ in range(rng.randint(1, 80)))
            piece += rng.choice(["。", "，", "！", "？", "、", "」", ""])
        elif kind < 0.52:
            piece = "".join(rng.choice(EMOJI) for _ in range(rng.randint(1, 6)))
        elif kind < 0.60:
            piece = " ".join(numbers(rng) for _ in range(rng.randint(1, 5)))
        elif kind < 0.68:
            piece = "".join(rng.choice(SPACES) for _ in range(rng.randint(1, 8)))
        elif kind < 0.74:
            piece = " ".join(rng.choice(CONTRACTIONS) for _ in range(rng.randint(1, 4)))
        elif kind < 0.80:
            # Decomposed text that NFC recomposes, and Hangul jamo.
            word = " ".join(rng.choice(WORDS["latin"] + WORDS["korean"]) for _ in range(3))
            piece = unicodedata.normalize("NFD", word)
        elif kind < 0.86:
            word = rng.choice(WORDS[rng.choice(scripts)])
            token = rng.choice(ADDED)
            cut = rng.randint(0, len(word))
            piece = word[:cut] + token + word[cut:]
        elif kind < 0.92:
            piece = rng.choice(["=" * rng.randint(3, 80), "-" * rng.randint(3, 40),
                                "..." * rng.randint(1, 10), "!!??" * rng.randint(1, 5),
                                "//" + "*" * rng.randint(1, 30), "«»“”‘’—–…",
                                "a" * rng.randint(50, 400), "ab" * rng.randint(20, 200)])
        else:
            # Letters with combining marks over them, as \p{M} sees them.
            base = rng.choice("aeiouAEIOUnNcC")
            marks = "".join(chr(rng.choice([0x300, 0x301, 0x302, 0x303, 0x308, 0x327, 0x30A]))
                            for _ in range(rng.randint(1, 3)))
            piece = base + marks + rng.choice(["", "x", " ", "\u0301"])
        piece += rng.choice([" ", " ", "", "\n", ". ", ", "])
        parts.append(piece)
        size += len(piece.encode("utf-8"))
    return "".join(parts)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("source")
    parser.add_argument("out")
    parser.add_argument("--bytes", type=int, default=1 << 20)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    files = sorted(glob.glob(os.path.join(args.source, "lib", "*", "*.cpp"))
                   + glob.glob(os.path.join(args.source, "docs", "*.md")))
    text, size = [], 0
    for path in files:
        if size >= args.bytes // 2:
            break
        with open(path, encoding="utf-8") as f:
            piece = f.read()
        text.append(piece)
        size += len(piece.encode("utf-8"))
    text.append(generated(rng, args.bytes - size))
    with open(args.out, "w", encoding="utf-8", newline="") as f:
        f.write("".join(text))


if __name__ == "__main__":
    main()
