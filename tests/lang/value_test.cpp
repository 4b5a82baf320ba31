// Values and the shared arithmetic (lang/value.h): float printing as Python's repr,
// wrap-around, truncating division, C remainder, conversions, min/max.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>

#include "lang/value.h"
#include "tests/lang/unit_util.h"

using namespace descent;
using namespace descent::unit;

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct ReprCase {
  uint64_t bits;     // the double, bit for bit
  const char* repr;  // Python's repr() of it
};

// The format_float table: python3 tests/lang/gen_float_repr_cases.py regenerates it.
const ReprCase kReprCases[] = {
    {0x0000000000000000ULL, "0.0"},
    {0x8000000000000000ULL, "-0.0"},
    {0x4341c37937e08000ULL, "1e+16"},
    {0x430c6bf526340000ULL, "1000000000000000.0"},
    {0x3f1a36e2eb1c432dULL, "0.0001"},
    {0x3ee4f8b588e368f1ULL, "1e-05"},
    {0x0000000000000001ULL, "5e-324"},
    {0x7fefffffffffffffULL, "1.7976931348623157e+308"},
    {0x3fd3333333333334ULL, "0.30000000000000004"},
    {0x437b69b4ba630f35ULL, "1.2345678901234568e+17"},
    {0x7ff8000000000000ULL, "nan"},
    {0x7ff0000000000000ULL, "inf"},
    {0xfff0000000000000ULL, "-inf"},
    {0x3ff0000000000000ULL, "1.0"},
    {0xbff0000000000000ULL, "-1.0"},
    {0x4008000000000000ULL, "3.0"},
    {0x3fb999999999999aULL, "0.1"},
    {0x3fe0000000000000ULL, "0.5"},
    {0x4004000000000000ULL, "2.5"},
    {0x4415af1d78b58c40ULL, "1e+20"},
    {0x4480f0cf064dd592ULL, "1e+22"},
    {0x44b52d02c7e14af6ULL, "1e+23"},
    {0x4341c37937e07fffULL, "9999999999999998.0"},
    {0x4341c37937e07fffULL, "9999999999999998.0"},
    {0x3f1a36e2eb1c432dULL, "0.0001"},
    {0x3ee9e0fcaf9380fcULL, "1.234e-05"},
    {0x40fe240c9fbe76c9ULL, "123456.789"},
    {0x7e41eb2d66005835ULL, "1.5e+300"},
    {0x81bac9a7b3b7302fULL, "-2.5e-300"},
    {0x0010000000000000ULL, "2.2250738585072014e-308"},
    {0x000fffffffffffffULL, "2.225073858507201e-308"},
    {0x4011666666666666ULL, "4.35"},
    {0x3fd5555555555555ULL, "0.3333333333333333"},
    {0x3fe5555555555555ULL, "0.6666666666666666"},
    {0x4059000000000000ULL, "100.0"},
    {0x54b249ad2594c37dULL, "1e+100"},
    {0x4340000000000000ULL, "9007199254740992.0"},
    {0x4340000000000000ULL, "9007199254740992.0"},
    {0x3fd3333333333333ULL, "0.3"},
    {0x3e7ad7f29abcaf48ULL, "1e-07"},
    {0x430c6bf52633ffffULL, "999999999999999.9"},
    {0x4341c37937e08000ULL, "1e+16"},
    {0x43118b54f22aeb03ULL, "1234567890123456.8"},
    {0x4345ee2a2eb5a5c4ULL, "1.2345678901234568e+16"},
    {0x400921fb54442d18ULL, "3.141592653589793"},
    {0x4005bf0a8b145769ULL, "2.718281828459045"},
    {0xc21d4223fc1f977bULL, "-31415926535.89793"},
    {0x3f0a36e2eb1c432dULL, "5e-05"},
    {0x3f23a92a30553261ULL, "0.00015"},
    {0x000012688b70e62bULL, "1e-310"},
    {0xfed387a6899bc6c8ULL, "-8.370575911836165e+302"},
    {0x1d643d301120dca9ULL, "4.290241908015238e-167"},
    {0xcbe473c95b3b88bfULL, "-4.0119097691347e+57"},
    {0xbe43911b5a108f86ULL, "-9.111512268697164e-09"},
    {0x0838a2fb1494b863ULL, "4.6634296269948635e-269"},
    {0xfd7133451b8922c9ULL, "-1.757644732557908e+296"},
    {0xa898424d45bb5394ULL, "-3.94034621886858e-113"},
    {0xbda286a7e83520f7ULL, "-8.424649221715768e-12"},
    {0x5fdf7c71da8c4c83ULL, "6.596246027687119e+153"},
    {0x4d26ea1e9f6eaaf0ULL, "4.713245394971908e+63"},
    {0xb202c50f5cf389f7ULL, "-8.702616284770238e-68"},
    {0xf710813bbe13c5caULL, "-3.326189043621181e+265"},
    {0x2e10eb87f05b69e5ULL, "8.505556232938727e-87"},
    {0x589c777dc670f5aaULL, "7.1785444430545395e+118"},
    {0x4d7353d35bc8682aULL, "1.2721358758278505e+65"},
    {0xebe1b3d74b177f52ULL, "-4.655878806502275e+211"},
    {0xd5f01afbbe8a3ae6ULL, "-9.234430338838783e+105"},
    {0x0a393238f087ba74ULL, "2.0484174719563475e-259"},
    {0x0ac3a60ab02e4b84ULL, "8.178719840535194e-257"},
    {0x3b566fd3c0821767ULL, "7.423722602276943e-23"},
    {0x29ecb31e915d603eULL, "9.77616855273344e-107"},
    {0xc4b211a3183fe0aeULL, "-8.532794355436852e+22"},
    {0xb00df7465e981c72ULL, "-3.2348839308521203e-77"},
    {0xed95593afe0233caULL, "-7.536077658933637e+219"},
    {0x8734a3a2bf58b367ULL, "-5.961243442446384e-274"},
    {0x0d74ff0c3f349278ULL, "7.687513465252539e-244"},
    {0x355a12948c725b93ULL, "1.0888417111275012e-51"},
    {0x35eedadce3d289c4ULL, "6.597438087124148e-49"},
    {0x0fdf4323ae235173ULL, "3.1463263759699904e-232"},
    {0xc78dcadc4f6bf401ULL, "-4.9501155332167645e+36"},
    {0x8e0320f4c9b854e0ULL, "-3.585912898159654e-241"},
    {0xd4fe86ccdf55e2a0ULL, "-2.6707699347894502e+101"},
    {0x09ee381bb5828a2aULL, "7.677438392860827e-261"},
    {0x087844d05bd4684dULL, "7.350083068074143e-268"},
    {0x44e2b2817ab40df1ULL, "7.063635768345915e+23"},
    {0xcd5a64b906f29808ULL, "-4.3430539444760934e+64"},
    {0x3a895a0a800e0266ULL, "1.02394792623323e-26"},
    {0xa11827ec8aaee3cfULL, "-2.9517959796316336e-149"},
    {0x540dbb857f5dca92ULL, "7.938530856253379e+96"},
    {0x8d6681aa15f80d3bULL, "-4.120230550764073e-244"},
    {0x381756fe8bce42b2ULL, "1.7147392749646992e-38"},
    {0x557b7bfcbfae3080ULL, "6.155787328430456e+103"},
    {0xbcf09d4868714cdbULL, "-3.689134799439513e-15"},
    {0x70cef96493eb2f28ULL, "2.462105182071742e+235"},
    {0x3e42f25faf222f26ULL, "8.822778483728364e-09"},
    {0xa26d769ad3e4718dULL, "-7.550460777579789e-143"},
    {0xa6951838595b0611ULL, "-7.977618694222568e-123"},
    {0xdfe25d866917b2b5ULL, "-7.694963956138681e+153"},
    {0x941ccd99d6d3fd90ULL, "-8.555841399755926e-212"},
    {0x7705e509ef3e1898ULL, "2.206199875799243e+265"},
    {0x301a99120570bec1ULL, "5.7426054335120294e-77"},
    {0xed6b2b140c2fc4e4ULL, "-1.1988060445580615e+219"},
    {0xf22a19e3bcd76878ULL, "-8.702135994789302e+241"},
    {0x7f7c6d9ffd5ce0bfULL, "1.2476860454809617e+306"},
    {0xb8b3c2d0f5f70fa2ULL, "-1.486652481850368e-35"},
    {0xba01d79d4a634b79ULL, "-2.815009721217039e-29"},
    {0xdce7eee7963df9feULL, "-3.56261723976147e+139"},
    {0xb3e1ad8c0c2aec9aULL, "-8.800796405997299e-59"},
    {0xa0c13407f4d7c328ULL, "-6.569352876721621e-151"},
    {0xc493d1c03c32e816ULL, "-2.3398546172113706e+22"},
    {0xc30add3452fb74e7ULL, "-945195774340764.9"},
    {0xc6c3c3ace3d558a2ULL, "-8.017375620300253e+32"},
    {0x1b2e6db4deeedb35ULL, "9.38628425099364e-178"},
    {0x4800e5a9404dd13eULL, "7.187237355222993e+38"},
    {0x0000625bccc35f76ULL, "5.34314293121063e-310"},
    {0x529c80da29716f8bULL, "9.072235372893557e+89"},
    {0xb15e2fad5d1ffc20ULL, "-6.833922340635202e-71"},
    {0x59aaf215b5f6aa40ULL, "8.906289326978577e+123"},
    {0xbb112a7c548b7bc4ULL, "-3.549837250266925e-24"},
    {0x646a1347a039eb60ULL, "5.1593738439432654e+175"},
    {0x49d125ccf274a991ULL, "3.915832963443387e+47"},
    {0x7f61416bd18ee39bULL, "3.786643841051889e+305"},
    {0x75fb0b7a8bab3fe5ULL, "2.07912531226662e+260"},
    {0x80000000004dec34ULL, "-2.523065e-317"},
    {0xf21ca7b7ea5592b2ULL, "-4.776823857045873e+241"},
    {0x3da5f598e4011e16ULL, "9.985962686212907e-12"},
    {0xee8daac94bcb84bdULL, "-3.4316452097159343e+224"},
    {0xa06578a546f99b64ULL, "-1.2811204959275415e-152"},
    {0x5da78aa9bb6136f6ULL, "1.4353734231328269e+143"},
    {0x19d4f50d3eefe8c5ULL, "3.0825960086283014e-184"},
    {0x41921c9d92e194caULL, "75966308.72029415"},
    {0x8d6dd11fa1579892ULL, "-5.458531892995476e-244"},
    {0x93e610b7e72d99b2ULL, "-8.193001446500101e-213"},
    {0x6c234d9db096184cULL, "8.122991126772486e+212"},
    {0x6a44c392813f5ca3ULL, "8.137615109973688e+203"},
    {0x0d760e7eaefb0ab8ULL, "8.075743052920966e-244"},
    {0xcaad1e691aeed5f1ULL, "-5.447316624660193e+51"},
    {0x7a6c8ddb9d767c8dULL, "5.18316376371575e+281"},
    {0x0000001390c752a4ULL, "4.15179965514e-313"},
    {0xbe797299bc4ec5a3ULL, "-9.479991465337694e-08"},
    {0xecfa947c442dad9aULL, "-9.162884614320263e+216"},
    {0x20f0ed11eee6ca2fULL, "5.170802057116271e-150"},
    {0xa5eb18eb4ea22c04ULL, "-5.003783309141245e-126"},
    {0xafba8eb577756931ULL, "-8.959166812215902e-79"},
    {0xbc94b875a19e363fULL, "-7.188883138603795e-17"},
    {0x292ce4279cc62dbaULL, "2.402689349066983e-110"},
    {0x796de0560f3d8d46ULL, "8.275095902054068e+276"},
    {0xfbe0cdff27dbb81aULL, "-5.117713468799226e+288"},
    {0x820699c51d1f0e30ULL, "-6.749560779076588e-299"},
    {0xac85fa8fb55116f4ULL, "-3.2927174099153084e-94"},
    {0xd185fb9595b421d0ULL, "-5.338150873139247e+84"},
    {0x4658fcdc53af0233ULL, "7.91892992672958e+30"},
    {0x9808b7b9cc873024ULL, "-6.772054939556155e-193"},
    {0x96faf3853ffe2c96ULL, "-5.633545500211459e-198"},
    {0xcbb9a010085e1b9bULL, "-6.283291702949948e+56"},
    {0x42cd067a83baba6dULL, "63827324925300.85"},
    {0xa3e66b97817a4269ULL, "-9.639466687718993e-136"},
    {0x19affb5101691002ULL, "5.880229622473873e-185"},
    {0xb2b741c5c853b730ULL, "-2.208376990319505e-64"},
    {0x4caa5042c65b9a58ULL, "2.1142097301880435e+61"},
    {0x5c54c0e5c4fb3c7dULL, "6.033780731356558e+136"},
    {0xc38954c3cbc73150ULL, "-2.2816237862244608e+17"},
    {0x25f601bd11c2b404ULL, "8.127529311119086e-126"},
    {0x1869cbf5a321f878ULL, "4.5233188179411334e-191"},
    {0xb9adcfa3815e6787ULL, "-7.349000741566075e-31"},
    {0x8db170341db3592aULL, "-1.0215685856323743e-242"},
    {0x041182750c95a647ULL, "4.491799470990991e-289"},
    {0xefd8ca4bdb3c63edULL, "-6.013635160293032e+230"},
    {0x67fb6f110bb2e8f2ULL, "7.822833068011888e+192"},
    {0x84776e831e8f2b9bULL, "-3.8470490650880207e-287"},
    {0x5341a84939672562ULL, "1.1509981588512118e+93"},
    {0xe68db6efa3315f6fULL, "-1.0100831907687632e+186"},
    {0x0908a8fdc4a7f5e0ULL, "3.823922246350243e-265"},
    {0x765bbad9bf5dd8b9ULL, "1.3643453482632962e+262"},
    {0x19719c2e0505ccd8ULL, "4.047286498939621e-186"},
    {0xe10f774c589bd59eULL, "-3.4561245262992962e+159"},
    {0xd0f1e1f69de861adULL, "-8.481471046380406e+81"},
    {0x4222431f7f21d3b7ULL, "39217774480.913506"},
    {0x9397a54f0e41c2eeULL, "-2.7436958144495e-214"},
    {0x1702b35aae97c8fbULL, "7.817870192844443e-198"},
    {0xef9f3448d2ecefa2ULL, "-4.730970826622628e+229"},
    {0x83a522cff832ae35ULL, "-4.236007412439754e-291"},
    {0x3fa2495277b09cc8ULL, "0.03571565352495437"},
    {0xe9dcbb00c40e9a7aULL, "-8.796704444665578e+201"},
    {0x49e0b0d5d2086badULL, "7.6229927900413e+47"},
    {0xe974e14babe1b567ULL, "-9.989158387571373e+199"},
    {0x175dcafc8f8b585aULL, "3.985619654324847e-196"},
    {0xe3e9ee9311811ee1ULL, "-2.004298453116823e+173"},
    {0x85856d6c89ff0b2dULL, "-4.611097517942113e-282"},
    {0x44626597ac8cead4ULL, "2.714895222138569e+21"},
    {0x6fe438f07e0d65afULL, "9.811147604470885e+230"},
    {0xe96156a97b40483cULL, "-4.147431826454032e+199"},
    {0xa9cda0cd0887a5b0ULL, "-2.5231076308767117e-107"},
    {0x6aa79d420e85cc6fULL, "5.923002738372043e+205"},
    {0xa920029bd3c8334fULL, "-1.331459903391389e-110"},
    {0x86655905a3fafe17ULL, "-7.526723509718557e-278"},
    {0xc9f3ee98d17dd359ULL, "-1.820667429706087e+48"},
    {0x6d63fe3daa1c834bULL, "8.822011523754777e+218"},
    {0x15c0cd7ea9cb292cULL, "6.699037037014008e-204"},
    {0x65a048c7842da62fULL, "3.378596652376626e+181"},
    {0x723745c87123a9d5ULL, "1.5518196435309966e+242"},
    {0x7fb4ab0952f4bfb3ULL, "1.4513641131960604e+307"},
    {0x3ccd42a7bc20ca1dULL, "8.121384656745461e-16"},
    {0x770d31f33b4c9160ULL, "2.9418222429374514e+265"},
    {0x893f046e730f20d7ULL, "-3.8477597810445287e-264"},
    {0xd9cec91805e8d122ULL, "-4.0701907215945665e+124"},
    {0xc0549034d3a2f242ULL, "-82.25322428620078"},
    {0x4f173c9fd3a862b2ULL, "1.026397404809842e+73"},
    {0x205bb0aa57feb411ULL, "8.260887800222545e-153"},
    {0xd709af8bff9942c9ULL, "-1.9303689783226338e+111"},
    {0x487da44f24cdf5d8ULL, "1.6138548751923792e+41"},
    {0x7252a8bb33be257bULL, "4.976767651908083e+242"},
    {0x7641401403a68353ULL, "4.243684001143342e+261"},
    {0x69e59127fffa34b0ULL, "1.3206787210431932e+202"},
    {0xcd69906838dd7a67ULL, "-8.413165419632566e+64"},
    {0xb20f92d650d5f9d8ULL, "-1.4639115893319794e-67"},
    {0x60160e9e79eac1bdULL, "7.39343590298234e+154"},
    {0x576ceea877ff948aULL, "1.3915881519475279e+113"},
    {0xc10d994f54f9a508ULL, "-242473.9164917844"},
    {0xd274e4df426fc85aULL, "-1.662573992275235e+89"},
    {0x304c834ddc741730ULL, "4.924845385313297e-76"},
    {0x9b196bfbb2981d3eULL, "-3.920929495172485e-178"},
    {0x6d6861b3f654d500ULL, "1.0758457235401407e+219"},
    {0x65c96b00f24a4cf6ULL, "2.109446339663942e+182"},
    {0x894919571f5abe4cULL, "-6.2271593799860065e-264"},
    {0xb7b73a1da5cf1507ULL, "-2.6663305456200796e-40"},
    {0xa889c7e1db9954ecULL, "-2.093764662695023e-113"},
    {0x1e3b8a867dcdd592ULL, "4.7825979388424386e-163"},
    {0xa2c437a1abc11f43ULL, "-3.315854203881996e-141"},
    {0xc17e5c6926997d7cULL, "-31835794.412473187"},
    {0x32ed8c9af904c796ULL, "2.2446944589665563e-63"},
    {0x46c8f42225e16dd5ULL, "1.0122401408525367e+33"},
    {0xcbba33fd20e33134ULL, "-6.42497681139857e+56"},
    {0x4b3593d5819b2811ULL, "2.0667116667711824e+54"},
    {0xef36066950692187ULL, "-5.2176330591931425e+227"},
    {0x4659487ddadd8fa9ULL, "8.01255653141669e+30"},
    {0x29d755bb21bcafabULL, "3.974360409829889e-107"},
    {0x0c0a66b06e149d18ULL, "1.1523280396545676e-250"},
    {0xc87aed40d1e41723ULL, "-1.4660328222462656e+41"},
    {0xe590822381c78a51ULL, "-1.712541828893e+181"},
    {0x7b06db77929f122cULL, "4.2486476996434605e+284"},
    {0xc4cb008defe06bf3ULL, "-2.550282453550269e+23"},
    {0x3bb47fc5e6323077ULL, "4.3408561208791454e-21"},
    {0x1fb4b2b2643b6205ULL, "6.030195080316455e-156"},
    {0x9de8f46ca3a0dd2eULL, "-1.3542104881074317e-164"},
    {0x01747724553ca79eULL, "1.1937257205441717e-301"},
    {0x2f93a87fd720a7d7ULL, "1.6579251429537208e-79"},
    {0x3dba2ac0cd9c31d6ULL, "2.3798751902012632e-11"},
    {0xf2513d22fcd39f13ULL, "-4.597946720628363e+242"},
    {0xe1174cdcd7addc9cULL, "-5.118446909071899e+159"},
    {0x4f97d4cd85e078a7ULL, "2.6947963906154325e+75"},
    {0x05c20fb67c0a0e06ULL, "6.218776402377722e-281"},
    {0x4fc7082bf9f8cc86ULL, "2.083526761650914e+76"},
    {0x135a3e0e1755b7d5ULL, "1.903122333470156e-215"},
    {0x84c6981411d99bebULL, "-1.1870481321799894e-285"},
    {0xd21ef4e4564ef5b5ULL, "-3.848860262475093e+87"},
    {0x80816f4614b5fe05ULL, "-3.103473047601923e-306"},
    {0xf82b0698d952a9beULL, "-7.138783189733612e+270"},
    {0xa72c11365fbeb2aeULL, "-5.434647547015263e-120"},
    {0x77e7ecf2bf9ce789ULL, "3.949922676655592e+269"},
    {0x408e8fb020c49ba6ULL, "977.961"},
    {0xc110d84000000000ULL, "-275984.0"},
    {0x40e8b95333333333ULL, "50634.6"},
    {0xc0e3f50000000000ULL, "-40872.0"},
    {0xc10afe8800000000ULL, "-221137.0"},
    {0xc0eea4edb6db6db7ULL, "-62759.42857142857"},
    {0xc086475c28f5c28fULL, "-712.92"},
    {0x411c597000000000ULL, "464476.0"},
    {0xc111edf400000000ULL, "-293757.0"},
    {0x40bf8ac000000000ULL, "8074.75"},
    {0xc0ee488000000000ULL, "-62020.0"},
    {0x408afca7ef9db22dULL, "863.582"},
    {0xc0a9bf4ccccccccdULL, "-3295.65"},
    {0x40c0169eb851eb85ULL, "8237.24"},
    {0x4109f37555555555ULL, "212590.66666666666"},
    {0xc104c1dd55555555ULL, "-170043.66666666666"},
    {0xc126cec600000000ULL, "-747363.0"},
    {0x40b9fa35c28f5c29ULL, "6650.21"},
    {0x40f7f65492492492ULL, "98149.28571428571"},
    {0xc08b8ad4fdf3b646ULL, "-881.354"},
    {0x40ff2c0492492492ULL, "127680.28571428571"},
    {0x40d3d2799999999aULL, "20297.9"},
    {0xc12b487c00000000ULL, "-894014.0"},
    {0x40b05f970a3d70a4ULL, "4191.59"},
    {0xc0c372eccccccccdULL, "-9957.85"},
    {0xc086989db22d0e56ULL, "-723.077"},
    {0xc07682bc6a7ef9dbULL, "-360.171"},
    {0xc0e423c000000000ULL, "-41246.0"},
    {0xc124cb6400000000ULL, "-681394.0"},
    {0x410d569000000000ULL, "240338.0"},
    {0x4126ec4400000000ULL, "751138.0"},
    {0x40cd40599999999aULL, "14976.7"},
    {0x412d2aa400000000ULL, "955730.0"},
    {0xc0e3387b6db6db6eULL, "-39363.857142857145"},
    {0x40f11a9000000000ULL, "70057.0"},
    {0x40f1e5c000000000ULL, "73308.0"},
    {0xc0bee17333333333ULL, "-7905.45"},
    {0x412dd4f200000000ULL, "977529.0"},
    {0x4101b79555555555ULL, "145138.66666666666"},
    {0x41228e5600000000ULL, "608043.0"},
    {0x406c06c02f2f9874ULL, "224.21096"},
    {0xc066fccccccccccdULL, "-183.9"},
    {0xc087a26666666666ULL, "-756.3"},
    {0xc08f11999999999aULL, "-994.2"},
    {0x408a7a34d6a161e5ULL, "847.2758"},
    {0xc071aa49ba5e353fULL, "-282.643"},
    {0xc083f970a3d70a3dULL, "-639.18"},
    {0x4060a38a0902de01ULL, "133.1106"},
    {0x4087a2285553ef6bULL, "756.269694"},
    {0xc0843af19a415f46ULL, "-647.36797"},
    {0xc055251eb851eb85ULL, "-84.58"},
    {0xc065e00000000000ULL, "-175.0"},
    {0x408e8516f0068db9ULL, "976.6362"},
    {0x407f3ca3d70a3d71ULL, "499.79"},
    {0xc088e00000000000ULL, "-796.0"},
    {0x4059ab1f8a0902deULL, "102.6738"},
    {0x407614cccccccccdULL, "353.3"},
    {0x4074220f9096bb99ULL, "322.1288"},
    {0x405ce7e325d4a5dfULL, "115.623239"},
    {0x408302e147ae147bULL, "608.36"},
    {0xfff8000000000000ULL, "nan"},  // a negative nan prints as Python prints it
    {0x8000000000000001ULL, "-5e-324"},
    {0x0010000000000000ULL, "2.2250738585072014e-308"},
    {0x000fffffffffffffULL, "2.225073858507201e-308"},
};
// clang-format on

double from_bits(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

int64_t ib(BinaryOp op, int64_t a, int64_t b) {
  Value out;
  REQUIRE(apply_binary(op, Type::Int, Value::of_int(a), Value::of_int(b), &out));
  return out.i;
}
double fb(BinaryOp op, double a, double b) {
  Value out;
  REQUIRE(apply_binary(op, Type::Float, Value::of_float(a), Value::of_float(b), &out));
  return out.f;
}
bool cmp(BinaryOp op, Type t, Value a, Value b) {
  Value out;
  REQUIRE(apply_binary(op, t, a, b, &out));
  return out.b;
}

}  // namespace

TEST_CASE("value: format_float matches Python's repr on a generated table") {
  size_t n = sizeof kReprCases / sizeof kReprCases[0];
  REQUIRE(n > 300);
  int mismatches = 0, roundtrip_failures = 0;
  for (const ReprCase& c : kReprCases) {
    double d = from_bits(c.bits);
    std::string got = format_float(d);
    if (got != c.repr) {
      ++mismatches;
      MESSAGE("format_float(bits 0x", std::hex, c.bits, ") = ", got, ", Python repr: ", c.repr);
    }
    // The text reads back to the very same double (except nan, which has many).
    if (d == d && std::strtod(got.c_str(), nullptr) != d) ++roundtrip_failures;
  }
  CHECK(mismatches == 0);
  CHECK(roundtrip_failures == 0);
}

TEST_CASE("value: format_float edge cases") {
  CHECK(format_float(0.0) == "0.0");
  CHECK(format_float(-0.0) == "-0.0");
  CHECK(format_float(3.0) == "3.0");
  CHECK(format_float(-3.0) == "-3.0");
  CHECK(format_float(0.1) == "0.1");
  CHECK(format_float(0.1 + 0.2) == "0.30000000000000004");
  CHECK(format_float(1e16) == "1e+16");
  CHECK(format_float(1e15) == "1000000000000000.0");
  CHECK(format_float(9999999999999998.0) == "9999999999999998.0");
  CHECK(format_float(1e-4) == "0.0001");
  CHECK(format_float(1e-5) == "1e-05");
  CHECK(format_float(1.5e-7) == "1.5e-07");
  CHECK(format_float(1e20) == "1e+20");
  CHECK(format_float(1e100) == "1e+100");
  CHECK(format_float(5e-324) == "5e-324");
  CHECK(format_float(1.7976931348623157e308) == "1.7976931348623157e+308");
  CHECK(format_float(123456789012345678.0) == "1.2345678901234568e+17");
  CHECK(format_float(123456.789) == "123456.789");
  CHECK(format_float(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(format_float(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(format_float(-std::numeric_limits<double>::infinity()) == "-inf");
}

TEST_CASE("value: format_value by type") {
  CHECK(format_value(Value::of_int(-42), Type::Int) == "-42");
  CHECK(format_value(Value::of_int(kMin), Type::Int) == "-9223372036854775808");
  CHECK(format_value(Value::of_int(kMax), Type::Int) == "9223372036854775807");
  CHECK(format_value(Value::of_float(2.5), Type::Float) == "2.5");
  CHECK(format_value(Value::of_float(2.0), Type::Float) == "2.0");
  CHECK(format_value(Value::of_bool(true), Type::Bool) == "true");
  CHECK(format_value(Value::of_bool(false), Type::Bool) == "false");
  // of_bool clears the whole value, so a bool compares and prints cleanly.
  CHECK(Value::of_bool(true).i == 1);
}

TEST_CASE("value: int arithmetic wraps modulo 2^64") {
  CHECK(ib(BinaryOp::Add, kMax, 1) == kMin);
  CHECK(ib(BinaryOp::Sub, kMin, 1) == kMax);
  CHECK(ib(BinaryOp::Mul, kMax, 2) == -2);
  CHECK(ib(BinaryOp::Mul, 4294967296, 4294967296) == 0);
  CHECK(ib(BinaryOp::Mul, kMin, -1) == kMin);
  CHECK(ib(BinaryOp::Add, 2, 3) == 5);
  CHECK(ib(BinaryOp::Sub, 2, 3) == -1);
  CHECK(wrap_neg(kMin) == kMin);
  CHECK(wrap_neg(5) == -5);
}

TEST_CASE("value: division truncates toward zero, remainder takes the dividend's sign") {
  CHECK(ib(BinaryOp::Div, 7, 2) == 3);
  CHECK(ib(BinaryOp::Div, -7, 2) == -3);
  CHECK(ib(BinaryOp::Div, 7, -2) == -3);
  CHECK(ib(BinaryOp::Div, -7, -2) == 3);
  CHECK(ib(BinaryOp::Mod, 7, 3) == 1);
  CHECK(ib(BinaryOp::Mod, -7, 3) == -1);
  CHECK(ib(BinaryOp::Mod, 7, -3) == 1);
  CHECK(ib(BinaryOp::Mod, -7, -3) == -1);
  CHECK(ib(BinaryOp::Div, kMin, -1) == kMin);
  CHECK(ib(BinaryOp::Mod, kMin, -1) == 0);
  CHECK(ib(BinaryOp::Div, kMin, 1) == kMin);
  CHECK(ib(BinaryOp::Mod, kMin, 2) == 0);
  CHECK(ib(BinaryOp::Mod, kMin, 3) == -2);
  // Division and remainder by zero are the only failures.
  Value out = Value::of_int(99);
  CHECK_FALSE(apply_binary(BinaryOp::Div, Type::Int, Value::of_int(1), Value::of_int(0), &out));
  CHECK_FALSE(apply_binary(BinaryOp::Mod, Type::Int, Value::of_int(1), Value::of_int(0), &out));
  CHECK_FALSE(apply_binary(BinaryOp::Div, Type::Int, Value::of_int(0), Value::of_int(0), &out));
  CHECK_FALSE(apply_binary(BinaryOp::Mod, Type::Int, Value::of_int(kMin), Value::of_int(0), &out));
}

TEST_CASE("value: float arithmetic is IEEE-754, with no errors") {
  CHECK(fb(BinaryOp::Add, 0.1, 0.2) == 0.30000000000000004);
  CHECK(fb(BinaryOp::Div, 1.0, 0.0) == std::numeric_limits<double>::infinity());
  CHECK(fb(BinaryOp::Div, -1.0, 0.0) == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(fb(BinaryOp::Div, 0.0, 0.0)));
  CHECK(fb(BinaryOp::Mod, -7.5, 2.0) == -1.5);
  CHECK(fb(BinaryOp::Mod, 7.5, -2.0) == 1.5);
  CHECK(std::isnan(fb(BinaryOp::Mod, 1.0, 0.0)));
  CHECK(fb(BinaryOp::Div, 7.0, 2.0) == 3.5);
  double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_FALSE(cmp(BinaryOp::Eq, Type::Float, Value::of_float(nan), Value::of_float(nan)));
  CHECK(cmp(BinaryOp::Ne, Type::Float, Value::of_float(nan), Value::of_float(nan)));
  CHECK_FALSE(cmp(BinaryOp::Lt, Type::Float, Value::of_float(nan), Value::of_float(1.0)));
  CHECK_FALSE(cmp(BinaryOp::Ge, Type::Float, Value::of_float(nan), Value::of_float(1.0)));
  CHECK(cmp(BinaryOp::Eq, Type::Float, Value::of_float(0.0), Value::of_float(-0.0)));
}

TEST_CASE("value: comparisons on ints and bools") {
  CHECK(cmp(BinaryOp::Lt, Type::Int, Value::of_int(kMin), Value::of_int(kMax)));
  CHECK_FALSE(cmp(BinaryOp::Gt, Type::Int, Value::of_int(kMin), Value::of_int(kMax)));
  CHECK(cmp(BinaryOp::Le, Type::Int, Value::of_int(3), Value::of_int(3)));
  CHECK_FALSE(cmp(BinaryOp::Ne, Type::Int, Value::of_int(3), Value::of_int(3)));
  CHECK(cmp(BinaryOp::Eq, Type::Bool, Value::of_bool(true), Value::of_bool(true)));
  CHECK(cmp(BinaryOp::Ne, Type::Bool, Value::of_bool(true), Value::of_bool(false)));
  CHECK_FALSE(cmp(BinaryOp::Eq, Type::Bool, Value::of_bool(false), Value::of_bool(true)));
}

TEST_CASE("value: float_to_int truncates and rejects nan and out-of-range values") {
  int64_t out = 7;
  CHECK(float_to_int(2.9, &out));
  CHECK(out == 2);
  CHECK(float_to_int(-2.9, &out));
  CHECK(out == -2);
  CHECK(float_to_int(-0.5, &out));
  CHECK(out == 0);
  CHECK(float_to_int(-9223372036854775808.0, &out));  // -2^63 is in range
  CHECK(out == kMin);
  CHECK(float_to_int(9223372036854774784.0, &out));  // the largest double below 2^63
  CHECK(out == 9223372036854774784LL);
  out = 7;
  CHECK_FALSE(float_to_int(9223372036854775808.0, &out));  // 2^63 is not
  CHECK_FALSE(float_to_int(-9223372036854777856.0, &out));  // the next double below -2^63
  CHECK_FALSE(float_to_int(std::numeric_limits<double>::quiet_NaN(), &out));
  CHECK_FALSE(float_to_int(std::numeric_limits<double>::infinity(), &out));
  CHECK_FALSE(float_to_int(-std::numeric_limits<double>::infinity(), &out));
  CHECK_FALSE(float_to_int(1e300, &out));
  CHECK(out == 7);  // untouched on failure
}

TEST_CASE("value: min and max pick like Python, also with nan") {
  double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(int_min(Value::of_int(3), Value::of_int(-4)).i == -4);
  CHECK(int_max(Value::of_int(3), Value::of_int(-4)).i == 3);
  CHECK(float_min(Value::of_float(1.5), Value::of_float(0.5)).f == 0.5);
  CHECK(float_max(Value::of_float(1.5), Value::of_float(0.5)).f == 1.5);
  CHECK(std::isnan(float_min(Value::of_float(nan), Value::of_float(1.0)).f));
  CHECK(float_min(Value::of_float(1.0), Value::of_float(nan)).f == 1.0);
  CHECK(std::isnan(float_max(Value::of_float(nan), Value::of_float(1.0)).f));
  CHECK(float_max(Value::of_float(1.0), Value::of_float(nan)).f == 1.0);
  // Equal values: the first one comes back (visible with signed zeros).
  CHECK(std::signbit(float_min(Value::of_float(-0.0), Value::of_float(0.0)).f));
  CHECK_FALSE(std::signbit(float_min(Value::of_float(0.0), Value::of_float(-0.0)).f));
}

TEST_CASE("value: call_math") {
  CHECK(call_math(Builtin::Sqrt, 16.0) == 4.0);
  CHECK(call_math(Builtin::Floor, -1.5) == -2.0);
  CHECK(call_math(Builtin::Floor, 2.7) == 2.0);
  CHECK(call_math(Builtin::Abs, -2.5) == 2.5);
  CHECK(call_math(Builtin::Exp, 0.0) == 1.0);
  CHECK(call_math(Builtin::Log, 1.0) == 0.0);
  CHECK(call_math(Builtin::Sin, 0.0) == 0.0);
  CHECK(call_math(Builtin::Cos, 0.0) == 1.0);
  CHECK(std::isnan(call_math(Builtin::Sqrt, -1.0)));
  CHECK(call_math(Builtin::Log, 0.0) == -std::numeric_limits<double>::infinity());
}

TEST_CASE("value: printing through a program") {
  CHECK(run("print(0.1 + 0.2, 1e16, 1e15, 1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0, -0.0, 1e-5)").output ==
        std::vector<std::string>{"0.30000000000000004 1e+16 1000000000000000.0 inf -inf nan -0.0 1e-05"});
  CHECK(run("print(9223372036854775807 + 1, -9223372036854775807 - 1, 7 / -2, -7 % 3, 7 % -3)").output ==
        std::vector<std::string>{"-9223372036854775808 -9223372036854775808 -3 -1 1"});
  CHECK(run("m = -9223372036854775807 - 1\nprint(m / -1, m % -1, -m, abs(m))").output ==
        std::vector<std::string>{"-9223372036854775808 0 -9223372036854775808 -9223372036854775808"});
  CHECK(run("print(-7.5 % 2.0, 2.5 * 2, float(7) / 2, int(-3.99), true, false)").output ==
        std::vector<std::string>{"-1.5 5.0 3.5 -3 true false"});
  CHECK(run("n = 0.0 / 0.0\nprint(min(n, 1.0), min(1.0, n), max(2, 3), min(2, 3.5), abs(-2), abs(-2.5))").output ==
        std::vector<std::string>{"nan 1.0 3 2.0 2 2.5"});
}
