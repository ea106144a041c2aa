//===- FloatConversion.h - bf16 and f16 to and from f32 -----------*- C++
//-*-===//
//
// Checkpoints store weights as BF16, F16 or F32; the loader converts 1-D
// tensors to the model's element type and `init-checkpoint` narrows its f32
// draws. Narrowing rounds to nearest, ties to even, and keeps NaN a NaN.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_RUNTIME_FLOATCONVERSION_H
#define LINNET_RUNTIME_FLOATCONVERSION_H

#include <cstdint>

namespace linnet {

float bf16ToFloat(uint16_t bits);
uint16_t floatToBF16(float value);
float f16ToFloat(uint16_t bits);
uint16_t floatToF16(float value);

} // namespace linnet

#endif // LINNET_RUNTIME_FLOATCONVERSION_H
