// Greedy generation from token ids through libllama, for bench/llama_cpp.py.
//
// llama.cpp's own tools take a text prompt and print text; the benchmark compares token ids with
// `linnet run --prompt-tokens --generate`, so this program takes ids and prints ids. It argmaxes
// the logits itself (no sampler, no end-of-generation stop) so that both sides run exactly N
// steps, and can write the logits of the prompt's last position for a numerical comparison.
//
//   llama_cpp_greedy MODEL.gguf THREADS 1,2,3 N [LOGITS.f32]
//
// Prints the N generated ids on one line, comma-separated.

#include "llama.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

static void quietLog(ggml_log_level level, const char *text, void *) {
  if (level >= GGML_LOG_LEVEL_ERROR)
    std::fputs(text, stderr);
}

static bool runBatch(llama_context *ctx, llama_batch_ext *batch,
                     const std::vector<llama_token> &tokens, llama_pos firstPos) {
  llama_batch_ext_clear(batch);
  for (size_t i = 0; i < tokens.size(); ++i) {
    int32_t idx = llama_batch_ext_add_token(batch, 0, tokens[i]);
    llama_pos pos = firstPos + static_cast<llama_pos>(i);
    if (idx < 0 || !llama_batch_ext_set_pos(batch, idx, &pos))
      return false;
  }
  llama_batch_ext_set_output_logits(batch, static_cast<int32_t>(tokens.size()) - 1, true);
  return llama_process(ctx, LLAMA_PROCESS_TYPE_DECODE, batch) == 0;
}

static llama_token argmax(const float *logits, int32_t vocabSize) {
  llama_token best = 0;
  for (int32_t i = 1; i < vocabSize; ++i)
    if (logits[i] > logits[best])
      best = i;
  return best;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s MODEL.gguf THREADS IDS N [LOGITS.f32]\n", argv[0]);
    return 2;
  }
  int threads = std::atoi(argv[2]);
  std::vector<llama_token> prompt;
  std::stringstream ids(argv[3]);
  for (std::string id; std::getline(ids, id, ',');)
    prompt.push_back(std::atoi(id.c_str()));
  int steps = std::atoi(argv[4]);

  llama_log_set(quietLog, nullptr);
  llama_backend_init();
  llama_model_params modelParams = llama_model_default_params();
  modelParams.n_gpu_layers = 0;
  llama_model *model = llama_model_load_from_file(argv[1], modelParams);
  if (!model) {
    std::fprintf(stderr, "cannot load %s\n", argv[1]);
    return 1;
  }
  int32_t vocabSize = llama_vocab_n_tokens(llama_model_get_vocab(model));

  llama_context_params contextParams = llama_context_default_params();
  contextParams.n_ctx = static_cast<uint32_t>(prompt.size() + steps + 1);
  contextParams.n_batch = static_cast<uint32_t>(prompt.size());
  contextParams.n_ubatch = static_cast<uint32_t>(prompt.size());
  contextParams.n_threads = threads;
  contextParams.n_threads_batch = threads;
  llama_context *ctx = llama_init_from_model(model, contextParams);
  if (!ctx) {
    std::fprintf(stderr, "cannot create a context\n");
    return 1;
  }
  llama_batch_ext *batch = llama_batch_ext_init(ctx);

  if (!runBatch(ctx, batch, prompt, 0)) {
    std::fprintf(stderr, "the prompt failed\n");
    return 1;
  }
  const float *logits = llama_get_logits_ith(ctx, -1);
  if (argc > 5) {
    FILE *out = std::fopen(argv[5], "wb");
    if (!out || std::fwrite(logits, sizeof(float), vocabSize, out) != size_t(vocabSize)) {
      std::fprintf(stderr, "cannot write %s\n", argv[5]);
      return 1;
    }
    std::fclose(out);
  }
  llama_pos pos = static_cast<llama_pos>(prompt.size());
  for (int step = 0; step < steps; ++step) {
    llama_token next = argmax(logits, vocabSize);
    std::printf(step ? ",%d" : "%d", next);
    if (step + 1 == steps)
      break;
    if (!runBatch(ctx, batch, {next}, pos++)) {
      std::fprintf(stderr, "decode step %d failed\n", step);
      return 1;
    }
    logits = llama_get_logits_ith(ctx, -1);
  }
  std::printf("\n");

  llama_batch_ext_free(batch);
  llama_free(ctx);
  llama_model_free(model);
  llama_backend_free();
  return 0;
}
