//===- FloatConversion.cpp - bf16 and f16 to and from f32 -----------------===//
//
// bf16 is the top half of an f32, so its conversions are bit operations;
// f16 goes through llvm::APFloat, which rounds exactly as IEEE 754 says.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/FloatConversion.h"

#include "llvm/ADT/APFloat.h"

#include <cstring>

using namespace linnet;

float linnet::bf16ToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

uint16_t linnet::floatToBF16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu))
    return uint16_t(bits >> 16 | 0x0040u); // a quiet NaN, sign kept
  uint32_t lsb = bits >> 16 & 1u;
  bits += 0x7FFFu + lsb;
  return uint16_t(bits >> 16);
}

float linnet::f16ToFloat(uint16_t bits) {
  llvm::APFloat half(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits));
  bool lost;
  half.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
               &lost);
  return half.convertToFloat();
}

uint16_t linnet::floatToF16(float value) {
  llvm::APFloat single(value);
  bool lost;
  single.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
                 &lost);
  return uint16_t(single.bitcastToAPInt().getZExtValue());
}
