// The GPU and model ids the original request names: the catalogs must keep every one of them.
#pragma once

#include <string>
#include <vector>

namespace perfcast::test {

inline const std::vector<std::string> kIssueGpuIds{
    "titan-x-pascal", "gtx-1080-ti",     "titan-xp",        "tesla-p40",       "quadro-p6000",   "p102-100",
    "gtx-1080",       "tesla-p4",        "p100-pcie-16gb",  "p100-sxm2-16gb",  "v100-pcie-16gb", "v100-pcie-32gb",
    "v100-sxm2-16gb", "v100-sxm2-32gb",  "v100-sxm3-32gb",  "t4",              "rtx-2080-ti",    "titan-rtx",
    "quadro-rtx-6000", "quadro-rtx-8000", "rtx-3070",       "rtx-3080",        "rtx-3090",       "rtx-a6000",
    "a10",            "a100-pcie-40gb",  "a100-pcie-80gb",  "a100-sxm4-40gb",  "a100-sxm4-80gb", "l4",
    "rtx-4090",       "l40s",            "h100-pcie-80gb",  "h100-sxm5-80gb",  "h200-sxm-141gb"};

inline const std::vector<std::string> kIssueModelIds{
    "alexnet",     "vgg16",       "vgg19",     "googlenet", "inception_v3", "inception_v4",  "resnet18",
    "resnet34",    "resnet50",    "resnet50_v1_5", "resnet101", "resnet152", "resnet200",  "densenet121",
    "densenet161", "mobilenet_v2", "ssd300",   "unet2d",    "unet3d",      "bert_base",     "bert_large",
    "gpt2",        "transformer_base", "gnmt", "nodule3d"};

}  // namespace perfcast::test
